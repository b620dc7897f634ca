package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestClaudeCannotWriteTheWorkspace: the provider double makes the model
// call Claude Code's Write and Bash tools; under the verified read-only
// profile (only Read, Glob, Grep) neither runs, and the workspace's git
// tree and status are unchanged.
func TestClaudeCannotWriteTheWorkspace(t *testing.T) {
	ws, _ := gitRepo(t)
	before := gitState(t, ws)
	dbl := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "done trying"}},
		providertest.ToolUse{Name: "Write", Input: map[string]any{"file_path": filepath.Join(ws, "PWNED.txt"), "content": "pwned"}},
		providertest.ToolUse{Name: "Bash", Input: map[string]any{"command": "echo x >> calc.go"}})
	cs := connect(t, env(t, dbl.URL()))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: map[string]any{
		"proposal": "create PWNED.txt", "backend": "claude", "workspace_path": ws}})
	if err != nil {
		t.Fatal(err)
	}
	sc := structured(t, res)
	if _, err := os.Stat(filepath.Join(ws, "PWNED.txt")); err == nil {
		t.Fatal("PWNED.txt was created")
	}
	if after := gitState(t, ws); after != before {
		t.Fatalf("git state changed:\n%s\n->\n%s", before, after)
	}
	// Both calls must have reached Claude Code and been refused: a refusal
	// reported back for each tool (a double repeating one message id once
	// had the second call dropped unseen).
	for _, tool := range []string{"Write", "Bash"} {
		var refused bool
		for _, r := range dbl.Requests() {
			b := string(r.Body)
			refused = refused || strings.Contains(b, `"is_error":true`) && strings.Contains(b, "No such tool available: "+tool)
		}
		if !refused {
			t.Errorf("Claude Code never reported the refused %s call back; result %v", tool, sc)
		}
	}
	t.Logf("outcome: status=%v", sc["status"])
}
