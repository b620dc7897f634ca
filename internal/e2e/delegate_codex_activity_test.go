package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestDelegateCodexActivityLines (issue 16 scope 1, live progress, Codex):
// while a codex job runs, session status shows the command the real
// Codex app-server started (its item/started commandExecution) as an
// activity line inside an untrusted fence, and `coagent8 jobs JOB` shows
// it too; once the job is cancelled it is gone from status. Before the
// Codex parser the lines stayed empty: the app-server transcript was read
// as Claude Code stream-json.
func TestDelegateCodexActivityLines(t *testing.T) {
	// After the command the answer streams for about a minute: the job is
	// still running while the test reads its status, however fast the
	// machine (the test cancels it then).
	double := providertest.NewOpenAITools(t, providertest.Options{Default: providertest.Reply{Text: strings.Repeat("slow ", 600),
		Chunks: 600, ChunkDelay: 100 * time.Millisecond}},
		providertest.FunctionCall{Name: "exec_command", Arguments: map[string]any{"cmd": "echo codex-activity-marker", "workdir": "/job/workspace"}})
	probe := providertest.NewOpenAI(t, providertest.Options{})
	environ := codexEnv(t, probe)
	environ = append(environ, "REAL_KEY="+delegateCodexKey(), "COAGENT8_UNSAFE_LOOPBACK_UPSTREAM=openai="+double.URL())
	writeConfig(t, filepath.Join(homeOf(environ), ".coagent8", "config.json"), `{"schemaVersion":1,"governance":{"models":{"allow":["`+
		codexModel+`"]}},"gate":{"credentials":{"openai":"env:REAL_KEY"}}}`)
	ws := gitWorkspace(t)
	var asked []string
	cs := connectElicit(t, environ, approving(&asked))
	sc, res := callDelegate(t, cs, map[string]any{"task": "print it", "workspace_path": ws, "backend": "codex", "model": codexModel,
		"budget": map[string]any{"max_usd": 3, "max_minutes": 5}})
	if res.IsError || sc["state"] != "running" {
		t.Fatalf("delegate = %v", sc)
	}
	id, _ := sc["job"].(string)
	const want = "command: echo codex-activity-marker"
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(300 * time.Millisecond) {
		sc, _ = call(t, cs, "session", map[string]any{"action": "status", "session_handle": id, "workspace_path": ws})
		if strings.Contains(fmt.Sprint(sc["activity"]), want) || sc["state"] != "running" || time.Now().After(deadline) {
			break
		}
	}
	act, _ := sc["activity"].(string)
	if sc["state"] != "running" || !strings.Contains(act, want) {
		so, _ := os.ReadFile(filepath.Join(homeOf(environ), ".coagent8", "jobs", id, "agent.stdout"))
		se, _ := os.ReadFile(filepath.Join(homeOf(environ), ".coagent8", "jobs", id, "agent.stderr"))
		t.Fatalf("status = %v activity %q, want running with %q\nagent stdout:\n%s\nagent stderr:\n%s", sc["state"], act, want, so, se)
	}
	if i := strings.Index(act, want); !strings.Contains(act, "<<<untrusted fence-") || !strings.Contains(act[:i], "kind=activity") ||
		!strings.Contains(act, "trust=untrusted") {
		t.Errorf("activity is not fenced:\n%s", act)
	}
	cmd := exec.Command(binary, "jobs", id)
	cmd.Env = environ
	jobsOut, _ := cmd.CombinedOutput()
	if !strings.Contains(string(jobsOut), "kind=activity") || !strings.Contains(string(jobsOut), want) {
		t.Errorf("coagent8 jobs %s shows no activity:\n%s", id, jobsOut)
	}
	if _, res := callDelegate(t, cs, map[string]any{"action": "status", "job": id, "workspace_path": ws}); !strings.Contains(res.Content[0].(*mcp.TextContent).Text, want) {
		t.Errorf("delegate status text lacks the activity:\n%s", res.Content[0].(*mcp.TextContent).Text)
	}
	if cc, res := call(t, cs, "cancel", map[string]any{"session_handle": id, "workspace_path": ws}); res.IsError || cc["cancelled"] != true {
		t.Fatalf("cancel = %v", cc)
	}
	if sc, _ := call(t, cs, "session", map[string]any{"action": "status", "session_handle": id, "workspace_path": ws}); sc["activity"] != nil {
		t.Errorf("an ended job still shows activity: %v", sc["activity"])
	}
}
