package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/redact/redacttest"
)

// maxOutput is the documented public answer bound (1 MiB).
const maxOutput = 1 << 20

// largeAnswer is n bytes of text lines with canary planted so that it
// straddles the public bound: its head before the cut, its tail after.
func largeAnswer(n int, canary string) string {
	line := "line of a long answer\n"
	at := maxOutput - len(canary)/2
	head := strings.Repeat(line, at/len(line)+1)[:at-1] + " "
	tail := strings.Repeat(line, n/len(line)+1)
	return (head + canary + " " + tail)[:n]
}

// Issue 19 item 6, over MCP with the pinned CLIs: a 600 KB answer arrives
// whole; a 2 MB one completes cut to the 1 MiB bound with truncated:true,
// and a credential straddling the cut leaks no piece.
func TestLargeAnswersOverMCP(t *testing.T) {
	canary := redacttest.Canaries()[0]
	for _, backend := range []string{"claude", "codex"} {
		for _, tt := range []struct {
			name      string
			size      int
			truncated bool
		}{
			{"600KB", 600 << 10, false},
			{"2MB", 2 << 20, true},
		} {
			t.Run(backend+"/"+tt.name, func(t *testing.T) {
				text := largeAnswer(tt.size, canary.Text)
				if !tt.truncated {
					text = strings.Repeat("line of a long answer\n", tt.size/22+1)[:tt.size]
				}
				reply := providertest.Reply{Text: text, Chunks: 40}
				var environ []string
				if backend == "claude" {
					environ = env(t, providertest.NewAnthropic(t, providertest.Options{Default: reply}).URL())
				} else {
					environ = codexEnv(t, providertest.NewOpenAI(t, providertest.Options{Default: reply}))
				}
				cs := connect(t, environ)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: map[string]any{
					"proposal": "write a lot", "backend": backend, "workspace_path": t.TempDir(), "session_mode": "none"}})
				if err != nil {
					t.Fatal(err)
				}
				sc := structured(t, res)
				out, _ := sc["output"].(string)
				if sc["status"] != "completed" || sc["truncated"] != tt.truncated || res.IsError {
					t.Fatalf("status %v, truncated %v, error %v; want completed, truncated %v",
						sc["status"], sc["truncated"], sc["error"], tt.truncated)
				}
				if !tt.truncated && out != text {
					t.Fatalf("output %d bytes, want the whole %d-byte answer", len(out), len(text))
				}
				if tt.truncated {
					want := strings.Replace(text, canary.Text, canary.Want, 1)[:maxOutput]
					if len(out) != maxOutput || out != want {
						t.Fatalf("output %d bytes, want the redacted answer cut to %d", len(out), maxOutput)
					}
				}
				for _, c := range res.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						redacttest.AssertNoLeak(t, []byte(tc.Text), []redacttest.Canary{canary})
					}
				}
				redacttest.AssertNoLeak(t, []byte(out), []redacttest.Canary{canary})
			})
		}
	}
}
