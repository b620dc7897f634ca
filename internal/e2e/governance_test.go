package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// modelRequests counts requests that reached the model API (metadata
// probes never do).
func modelRequests(d *providertest.Anthropic) int {
	n := 0
	for _, r := range d.Requests() {
		if strings.HasPrefix(r.Path, "/v1/messages") && !strings.Contains(r.Path, "count_tokens") {
			n++
		}
	}
	return n
}

func connectWith(t *testing.T, environ []string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary)
	cmd.Env = environ
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func homeOf(environ []string) string {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			return v
		}
	}
	return ""
}

func TestGovernanceWithRealCLI(t *testing.T) {
	tests := []struct {
		name      string
		config    string
		answer    *mcp.ElicitResult // nil = client without elicitation
		wantCode  string
		wantModel bool
	}{
		{"deny rule", `{"governance":{"models":{"deny":["claude-sonnet-5-5"]}}}`, nil, "POLICY_DENIED", false},
		{"ask without capability", `{"governance":{"models":{"ask":["claude-sonnet-5-5"]}}}`, nil, "POLICY_DENIED", false},
		{"ask declined", `{"governance":{"models":{"ask":["claude-sonnet-5-5"]}}}`, &mcp.ElicitResult{Action: "decline"}, "POLICY_DENIED", false},
		{"ask approved", `{"governance":{"models":{"ask":["claude-sonnet-5-5"]}}}`, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, "", true},
		{"unpriced approved and remembered", `{}`, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true, "remember": true}}, "", true},
		{"malformed governance", `{"governance":{"askAbovePrice":-1}}`, nil, "POLICY_DENIED", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "approved answer"}})
			environ := env(t, dbl.URL())
			cfgPath := filepath.Join(homeOf(environ), ".coagent8", "config.json")
			writeConfig(t, cfgPath, tt.config)
			var opts *mcp.ClientOptions
			asked := 0
			if tt.answer != nil {
				opts = &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked++
					return tt.answer, nil
				}}
			}
			cs := connectWith(t, environ, opts)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: map[string]any{
				"proposal": "hi", "backend": "claude", "workspace_path": t.TempDir()}})
			if err != nil {
				t.Fatal(err)
			}
			sc := structured(t, res)
			if tt.wantCode != "" {
				e, _ := sc["error"].(map[string]any)
				if e["code"] != tt.wantCode {
					t.Fatalf("structuredContent = %v", sc)
				}
				// One refusal is one security event (issue 19 item 4): the
				// governor (or consent) records it, the turn must not again.
				cs.Close() // the server flushes and closes its event log
				b, _ := os.ReadFile(filepath.Join(homeOf(environ), ".coagent8", "events.jsonl"))
				if n := strings.Count(string(b), `"type":"refusal"`); n != 1 {
					t.Errorf("%d refusal events in events.jsonl, want 1:\n%s", n, b)
				}
			} else if sc["status"] != "completed" || sc["output"] != "approved answer" {
				t.Fatalf("structuredContent = %v", sc)
			}
			if got := modelRequests(dbl) > 0; got != tt.wantModel {
				t.Fatalf("model requests made = %v, want %v", got, tt.wantModel)
			}
			if tt.answer != nil && asked == 0 {
				t.Fatal("the user was never asked")
			}
			if tt.name == "unpriced approved and remembered" {
				b, _ := os.ReadFile(cfgPath)
				if !strings.Contains(string(b), "claude-sonnet-5-5") {
					t.Fatalf("remember did not add the model: %s", b)
				}
			}
		})
	}
}
