package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// Issue 19 item 7, over MCP with the pinned Claude Code: the startup
// report names the approved model, the provider answers with another. The
// turn is refused with consent.model_mismatch and no answer text leaves.
func TestClaudeModelSwapMidStreamIsRefused(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Model: "claude-opus-4.7",
		Default: providertest.Reply{Text: "SWAPPED-MODEL-ANSWER", Chunks: 3}})
	cs := connect(t, env(t, dbl.URL()))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: map[string]any{
		"proposal": "which model are you?", "backend": "claude", "model": "claude-sonnet-5-5", "workspace_path": t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	sc := structured(t, res)
	e, _ := sc["error"].(map[string]any)
	if !res.IsError || sc["status"] != "failed" || e["code"] != "POLICY_DENIED" || e["reason"] != "consent.model_mismatch" {
		t.Fatalf("structuredContent = %v, want failed POLICY_DENIED consent.model_mismatch", sc)
	}
	if msg, _ := e["message"].(string); !strings.Contains(msg, "claude-opus-4.7") {
		t.Errorf("message %q does not name the reported model", msg)
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok && strings.Contains(tc.Text, "SWAPPED-MODEL-ANSWER") {
			t.Fatalf("the swapped model's answer reached the client: %q", tc.Text)
		}
	}
	if out, _ := sc["output"].(string); strings.Contains(out, "SWAPPED") {
		t.Fatalf("output = %q", out)
	}
}
