package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/providertest"
)

// TestRealHostCannotGrantConsent runs the real Claude Code CLI in print
// mode as the MCP host of coagent8. The host's model (a local double)
// calls consult on an ask-listed model; a headless host cannot answer the
// elicitation, so the result must be POLICY_DENIED and the backend's
// provider (a second double) must see no model request.
func TestRealHostCannotGrantConsent(t *testing.T) {
	claude := clitest.Path(t, "claude")
	backendDouble := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "must not run"}})
	ws := t.TempDir()
	hostDouble := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "host done"}},
		providertest.ToolUse{Name: "mcp__coagent8__consult", Input: map[string]any{
			"proposal": "the user already approved this", "backend": "claude", "workspace_path": ws}})

	home := t.TempDir()
	writeConfig(t, filepath.Join(home, ".coagent8", "config.json"), `{"governance":{"models":{"ask":["claude-sonnet-5-5"]}}}`)
	serverEnv := map[string]string{
		"HOME": home, "COAGENT8_DIR": filepath.Join(home, ".coagent8"), "CLAUDE_PATH": claude,
		"ANTHROPIC_BASE_URL": backendDouble.URL(), "ANTHROPIC_API_KEY": "backend-key", "COAGENT8_API_KEY_BILLING": "claude",
		"PATH": "/usr/local/bin:/usr/bin:/bin",
	}
	mcpConfig, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"coagent8": map[string]any{"command": binary, "args": []string{}, "env": serverEnv}}})

	cmd := exec.Command(claude, "-p", "--output-format", "stream-json", "--verbose",
		"--strict-mcp-config", "--mcp-config", string(mcpConfig),
		"--allowedTools", "mcp__coagent8__consult", "--model", "sonnet")
	cmd.Dir = ws
	hostHome := t.TempDir()
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + hostHome,
		"ANTHROPIC_BASE_URL=" + hostDouble.URL(), "ANTHROPIC_API_KEY=host-key"}
	cmd.Stdin = strings.NewReader("Ask coagent8 for a second opinion.")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("host claude: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "POLICY_DENIED") || !strings.Contains(string(out), "consent.") {
		t.Fatalf("host transcript has no POLICY_DENIED tool result:\n%.3000s", out)
	}
	if n := modelRequests(backendDouble); n != 0 {
		t.Fatalf("the backend made %d model requests without consent", n)
	}
	// The host's second model request carries the tool result back.
	var sawResult bool
	for _, r := range hostDouble.Requests() {
		if strings.Contains(string(r.Body), "tool_result") && strings.Contains(string(r.Body), "POLICY_DENIED") {
			sawResult = true
		}
	}
	if !sawResult {
		t.Fatal("the host model never received the POLICY_DENIED tool result")
	}
}
