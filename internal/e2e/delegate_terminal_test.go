package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestDelegateTerminal (issue 16 scopes 1, 2): `coagent8 delegate` cannot
// ask, so it is refused POLICY_DENIED consent.unsupported_client (no
// provider request, no sandbox) until delegate.allowWithoutAsking names
// the model; then the job runs in the foreground, prints the succeeded
// job with its fenced patch, and the checkout is unchanged until admit.
func TestDelegateTerminal(t *testing.T) {
	file := "/job/workspace/main.txt"
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "TERMINAL-DONE"}},
		providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": file}},
		providertest.ToolUse{Name: "Edit", Input: map[string]any{"file_path": file, "old_string": "old world", "new_string": "new world"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), double.URL(), "")
	ws := gitWorkspace(t)
	run := func() (string, error) {
		cmd := exec.Command(binary, "delegate", "--workspace", ws, "--model", delegateModel, "--max-usd", "3", "Change old world to new world.")
		cmd.Env = environ
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run()
	if err == nil || !strings.Contains(out, "POLICY_DENIED") || !strings.Contains(out, "delegate.allowWithoutAsking") {
		t.Fatalf("terminal delegate without allowWithoutAsking: %v\n%s", err, out)
	}
	noJobStarted(t, environ, double)

	writeConfig(t, filepath.Join(homeOf(environ), ".coagent8", "config.json"), `{"schemaVersion":1,"governance":{"models":{"allow":["`+
		delegateModel+`"]}},"gate":{"credentials":{"anthropic":"env:REAL_KEY"}},"delegate":{"allowWithoutAsking":["`+delegateModel+`"]}}`)
	before := dirHash(t, ws)
	out, err = run()
	if err != nil || !strings.Contains(out, `"state": "succeeded"`) || !strings.Contains(out, "+hello new world") || !strings.Contains(out, "trust=untrusted") {
		t.Fatalf("terminal delegate: %v\n%s", err, out)
	}
	if dirHash(t, ws) != before {
		t.Fatal("the checkout changed before admission")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "main.txt")); string(b) != "hello old world\n" {
		t.Fatalf("main.txt = %q", b)
	}
}
