package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// TestDelegateTerminalNoCredential: a delegate job whose provider has no
// gate credential (gate.credentials.anthropic absent) is refused
// AUTH_REQUIRED delegate.no_credential before the user would be asked:
// the terminal names the missing key, not the approval steps, and an MCP
// host with elicitation gets the same refusal without a question. No job
// is started and no provider request is made.
func TestDelegateTerminalNoCredential(t *testing.T) {
	double := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "SHOULD-NOT-ARRIVE"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), double.URL(), `{"schemaVersion":1,"governance":{"models":{"allow":["`+delegateModel+`"]}}}`)
	ws := gitWorkspace(t)
	cmd := exec.Command(binary, "delegate", "--workspace", ws, "--model", delegateModel, "--max-usd", "3", "Change old world to new world.")
	cmd.Env = environ
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err == nil || !strings.Contains(out, "[AUTH_REQUIRED]") || !strings.Contains(out, "(reason: delegate.no_credential)") ||
		!strings.Contains(out, "gate.credentials.anthropic") {
		t.Fatalf("terminal delegate without a gate credential: %v\n%s", err, out)
	}
	if strings.Contains(out, "consent.") || strings.Contains(out, "allowWithoutAsking") || strings.Contains(out, "approv") {
		t.Errorf("the refusal speaks of approval for a job that cannot run:\n%s", out)
	}

	asked := 0
	cs := connectElicit(t, environ, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked++
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	}})
	sc, res := callDelegate(t, cs, map[string]any{"task": "edit main.txt", "workspace_path": ws, "model": delegateModel,
		"budget": map[string]any{"max_usd": 2}})
	if code, reason := delegateErr(sc); !res.IsError || code != "AUTH_REQUIRED" || reason != "delegate.no_credential" || asked != 0 {
		t.Fatalf("MCP delegate without a gate credential = %v (asked %d times), want AUTH_REQUIRED delegate.no_credential unasked", sc, asked)
	}
	noJobStarted(t, environ, double)
}
