package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/providertest"
)

// delegateCodexKey is a synthetic OpenAI key built at run time: the real
// credential the in-process gate holds for a Codex job.
func delegateCodexKey() string {
	return "sk-proj-" + strings.Repeat("C", 24) + "delegate" + strings.Repeat("4", 10)
}

// TestDelegateCodexEndToEnd (issue 16, Codex delegate): through MCP with
// the built server, a delegate job with backend codex runs the pinned
// Codex as `codex app-server` in the candidate sandbox behind the
// in-process gate (OpenAI route, phantom credential), its thread report
// verified; the double's scripted exec_command edits main.txt and runs a
// command whose output file exists only in the candidate. The job
// succeeds with a fenced patch holding exactly those two changes, the
// final message, and the grant's counters; the double saw the real key
// only; the checkout is byte-identical before admission.
func TestDelegateCodexEndToEnd(t *testing.T) {
	double := providertest.NewOpenAITools(t, providertest.Options{Default: providertest.Reply{Text: "CODEX-DELEGATE-DONE"}},
		providertest.FunctionCall{Name: "exec_command", Arguments: map[string]any{"cmd": "sed -i s/old/new/ main.txt", "workdir": "/job/workspace"}},
		providertest.FunctionCall{Name: "exec_command", Arguments: map[string]any{"cmd": "echo ran-$((6*7)) > ran.txt", "workdir": "/job/workspace"}})
	probe := providertest.NewOpenAI(t, providertest.Options{})
	environ := codexEnv(t, probe)
	environ = append(environ, "REAL_KEY="+delegateCodexKey(), "COAGENT8_UNSAFE_LOOPBACK_UPSTREAM=openai="+double.URL())
	writeConfig(t, filepath.Join(homeOf(environ), ".coagent8", "config.json"), `{"schemaVersion":1,"governance":{"models":{"allow":["`+
		codexModel+`"]}},"gate":{"credentials":{"openai":"env:REAL_KEY"}}}`)
	ws := gitWorkspace(t)
	before := dirHash(t, ws)
	var asked []string
	cs := connectElicit(t, environ, approving(&asked))

	sc, res := callDelegate(t, cs, map[string]any{"task": "Change old world to new world in main.txt, then record the run.",
		"workspace_path": ws, "backend": "codex", "model": codexModel, "budget": map[string]any{"max_usd": 3, "max_minutes": 5}})
	if res.IsError || sc["state"] != "running" {
		t.Fatalf("delegate = %v", sc)
	}
	id, _ := sc["job"].(string)
	if len(asked) != 1 || !strings.Contains(asked[0], "Backend: codex") || !strings.Contains(asked[0], "Model: "+codexModel) {
		t.Fatalf("job question %q, want one naming backend codex and %s", asked, codexModel)
	}
	sc = pollJob(t, cs, ws, id)
	if sc["state"] != "succeeded" {
		diag, _ := os.ReadFile(filepath.Join(homeOf(environ), ".coagent8", "jobs", id, "agent.stderr"))
		so, _ := os.ReadFile(filepath.Join(homeOf(environ), ".coagent8", "jobs", id, "agent.stdout"))
		t.Fatalf("job ended %v\nagent stderr:\n%s\nagent stdout:\n%s", sc, diag, so)
	}
	patch, _ := sc["patch"].(string)
	if !strings.Contains(patch, "<<<untrusted fence-") || !strings.Contains(patch, "-hello old world") ||
		!strings.Contains(patch, "+hello new world") || !strings.Contains(patch, "+ran-42") ||
		strings.Contains(patch, "other.txt") || strings.Count(patch, "diff --git") != 2 {
		t.Errorf("patch is not exactly the scripted edit and the command's output, fenced:\n%s", patch)
	}
	if msg, _ := sc["message"].(string); !strings.Contains(msg, "CODEX-DELEGATE-DONE") || !strings.Contains(msg, "trust=untrusted") {
		t.Errorf("final message = %q", msg)
	}
	reqs := double.Requests()
	if used, _ := sc["used"].(map[string]any); used == nil || used["requests"].(float64) != float64(len(reqs)) || len(reqs) < 3 {
		t.Errorf("grant counters = %v, want the double's %d requests", sc["used"], len(reqs))
	}
	for _, r := range reqs {
		// The provider's hosted web search would send the model's queries
		// to a party no egress decision names: Codex is run with it off
		// (and the gate refuses it, request.hosted_tool).
		if strings.Contains(string(r.Body), `"type":"web_search`) {
			t.Errorf("%s %s: the request offers the hosted web_search tool", r.Method, r.Path)
		}
		if r.Credential() != delegateCodexKey() {
			t.Errorf("%s %s: the double did not get the real key through the gate", r.Method, r.Path)
		}
		if strings.Contains(r.Credential(), gate.PhantomPrefix) || strings.Contains(string(r.Body), gate.PhantomPrefix) ||
			strings.Contains(strings.Join(r.Header.Values("Authorization"), ""), gate.PhantomPrefix) {
			t.Errorf("%s %s: a phantom reached the double", r.Method, r.Path)
		}
	}
	if after := dirHash(t, ws); after != before {
		t.Fatal("the checkout changed before admission")
	}
	st := exec.Command("git", "status", "--porcelain")
	st.Dir = ws
	if out, _ := st.Output(); strings.TrimSpace(string(out)) != "" {
		t.Errorf("git status before admit = %q, want clean", out)
	}
}
