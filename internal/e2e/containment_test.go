package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/providertest"
)

// containmentOf returns doctor's containment entry for backend.
func containmentOf(t *testing.T, doc map[string]any, backend string) map[string]any {
	t.Helper()
	list, _ := doc["containment"].([]any)
	for _, e := range list {
		if m, _ := e.(map[string]any); m["backend"] == backend {
			return m
		}
	}
	t.Fatalf("doctor has no containment entry for %s: %v", backend, doc["containment"])
	return nil
}

// TestConsultKernelContainment (issue 15 scope 8): with a gate credential
// configured for anthropic on this (qualifying) host, a consult through
// the built server runs the pinned Claude Code in the kernel sandbox's
// read profile behind a per-turn grant: the result says containment
// kernel and meets the outputSchema, the answer is the double's
// unchanged, the tool round read the workspace file from inside, the
// double saw only the real (synthetic) key, the workspace is
// byte-identical, and doctor says claude gets kernel containment (codex
// stays on its profile, saying why).
func TestConsultKernelContainment(t *testing.T) {
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "KERNEL-CONSULT-ANSWER"}},
		providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": "/job/workspace/main.txt"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), double.URL(), "")
	ws := gitWorkspace(t)
	before := dirHash(t, ws)
	cs := connect(t, environ)

	sc, res := call(t, cs, "consult", map[string]any{"proposal": "What does main.txt say?", "workspace_path": ws,
		"backend": "claude", "model": delegateModel})
	if res.IsError || sc["status"] != "completed" {
		t.Fatalf("consult = %v", sc)
	}
	if sc["containment"] != "kernel" || sc["output"] != "KERNEL-CONSULT-ANSWER" || sc["continuationAvailable"] != true {
		t.Errorf("consult = containment %v output %q continuation %v (reason: %v)", sc["containment"], sc["output"], sc["continuationAvailable"], sc["containmentReason"])
	}
	if v, _ := sc["verification"].(string); !strings.Contains(v, "tools=[Glob,Grep,Read]") || !strings.Contains(v, "containment=kernel") {
		t.Errorf("verification = %q", v)
	}
	if err := outputSchemas(t, cs)["consult"].Validate(sc); err != nil {
		t.Errorf("kernel consult result does not meet consult's outputSchema: %v", err)
	}
	reqs := double.Requests()
	if len(reqs) < 2 || !strings.Contains(string(reqs[len(reqs)-1].Body), "hello old world") {
		t.Errorf("double saw %d requests; the workspace file did not reach the model through the tool round", len(reqs))
	}
	for _, r := range reqs {
		if r.Credential() != delegateKey() {
			t.Errorf("%s %s: the double did not get the real key through the gate", r.Method, r.Path)
		}
	}
	if dirHash(t, ws) != before {
		t.Error("the workspace changed during the kernel consult")
	}
	doc, _ := call(t, cs, "doctor", map[string]any{})
	if c := containmentOf(t, doc, "claude"); c["containment"] != "kernel" {
		t.Errorf("doctor claude containment = %v", c)
	}
}

// TestConsultProfileWithoutGateCredential: the same consult on a host
// with no gate credential configured keeps today's path — containment
// profile, the answer unchanged — and doctor says why.
func TestConsultProfileWithoutGateCredential(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "PROFILE-CONSULT-ANSWER"}})
	cs := connect(t, env(t, dbl.URL()))
	ws := t.TempDir()
	sc, res := call(t, cs, "consult", map[string]any{"proposal": "q", "workspace_path": ws, "backend": "claude", "model": "claude-sonnet-5-5"})
	if res.IsError || sc["status"] != "completed" || sc["containment"] != "profile" || sc["output"] != "PROFILE-CONSULT-ANSWER" {
		t.Fatalf("consult = %v", sc)
	}
	if r, _ := sc["containmentReason"].(string); !strings.Contains(r, "no gate credential configured for anthropic") {
		t.Errorf("containmentReason = %q", r)
	}
	if err := outputSchemas(t, cs)["consult"].Validate(sc); err != nil {
		t.Errorf("profile consult result does not meet consult's outputSchema: %v", err)
	}
	doc, _ := call(t, cs, "doctor", map[string]any{})
	c := containmentOf(t, doc, "claude")
	if c["containment"] != "profile" || !strings.Contains(fmt.Sprint(c["reason"]), "no gate credential configured for anthropic") {
		t.Errorf("doctor claude containment = %v", c)
	}
}

// TestReviewKernelContainment: review takes the same governed path — in
// the read profile behind a per-turn grant with a gate credential — and
// the server-gated verdict is unchanged; the result says containment
// kernel and meets review's outputSchema.
func TestReviewKernelContainment(t *testing.T) {
	ws, sha := gitRepo(t)
	double := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: envelope(sha, "READY", ""), Chunks: 3}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	cs := connect(t, delegateEnv(t, probe.URL(), double.URL(), ""))
	sc, res := call(t, cs, "review", map[string]any{"backend": "claude", "workspace_path": ws, "model": delegateModel})
	validateOutput(t, cs, "review", sc)
	if res.IsError || sc["status"] != "completed" || sc["containment"] != "kernel" || sc["verdict"] != "READY" {
		t.Fatalf("review = status %v containment %v verdict %v reason %v (%v)", sc["status"], sc["containment"], sc["verdict"], sc["reason"], sc["error"])
	}
	assertReviewPrompt(t, double, sha)
	for _, r := range double.Requests() {
		if r.Credential() != delegateKey() {
			t.Errorf("%s %s: the double did not get the real key through the gate", r.Method, r.Path)
		}
	}
}
