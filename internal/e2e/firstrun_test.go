package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// without returns environ minus the variables named.
func without(environ []string, names ...string) []string {
	var out []string
	for _, kv := range environ {
		keep := true
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// TestFirstRunErrorsOverMCP (issue 19 items 10, 11, 13) with the built
// server and the pinned Claude Code against a local provider double:
// each first-run mistake ends in a typed error naming its real cause,
// before any question to the user or any model request.
func TestFirstRunErrorsOverMCP(t *testing.T) {
	tests := []struct {
		name       string
		config     string // "" keeps env's allow-listing config
		env        func(t *testing.T, environ []string) []string
		args       map[string]any
		wantCode   string
		wantReason string
		inMsg      []string
	}{
		// The tool's schema names the accepted values (reason
		// arguments.invalid); any reason will do that names them.
		{name: "unknown backend", args: map[string]any{"backend": "nope"},
			wantCode: "INVALID_INPUT", inMsg: []string{"nope", "claude", "codex", "agy"}},
		{name: "unknown defaultBackend", config: `{"defaultBackend":"nope","governance":{"models":{"allow":["claude-sonnet-5-5"]}}}`,
			args: map[string]any{}, wantCode: "INVALID_INPUT", wantReason: "config.default_backend_invalid", inMsg: []string{`"nope"`, "claude, codex or agy"}},
		{name: "API key withheld: not logged in, never asked", config: `{}`,
			env:      func(_ *testing.T, e []string) []string { return without(e, "COAGENT8_API_KEY_BILLING") },
			wantCode: "AUTH_REQUIRED", wantReason: "claude.not_logged_in",
			inMsg: []string{"before asking for approval", "ANTHROPIC_API_KEY is set", "COAGENT8_API_KEY_BILLING=claude"}},
		{name: "named config missing", env: func(t *testing.T, e []string) []string {
			return append(e, "COAGENT8_CONFIG="+filepath.Join(homeOf(e), "nowhere", "config.json"))
		}, wantCode: "POLICY_DENIED", wantReason: "config.missing", inMsg: []string{"~/nowhere/config.json"}},
		{name: "schemaVersion 2", config: `{"schemaVersion":2,"governance":{"models":{"allow":["claude-sonnet-5-5"]}}}`,
			wantCode: "POLICY_DENIED", wantReason: "config.governance_invalid", inMsg: []string{"schemaVersion: must be 1"}},
		{name: "malformed JSON shows the cause", config: `{"governance":{"models":{"allow":["claude-sonnet-5-5"]}}`,
			wantCode: "POLICY_DENIED", wantReason: "config.invalid_json",
			inMsg: []string{filepath.Join("~", ".coagent8", "config.json") + " is not valid JSON: line 1, column 57: unexpected EOF"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "should not run"}})
			environ := env(t, dbl.URL())
			if tt.config != "" {
				writeConfig(t, filepath.Join(homeOf(environ), ".coagent8", "config.json"), tt.config)
			}
			if tt.env != nil {
				environ = tt.env(t, environ)
			}
			asked := 0
			cs := connectWith(t, environ, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked++
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			}})
			args := map[string]any{"proposal": "hi", "backend": "claude", "workspace_path": t.TempDir()}
			for k, v := range tt.args {
				args[k] = v
			}
			if _, ok := tt.args["backend"]; !ok && tt.args != nil {
				delete(args, "backend")
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: args})
			if err != nil {
				t.Fatal(err)
			}
			sc := structured(t, res)
			e, _ := sc["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if e["code"] != tt.wantCode || (tt.wantReason != "" && e["reason"] != tt.wantReason) {
				t.Fatalf("error = %v, want %s %s", e, tt.wantCode, tt.wantReason)
			}
			for _, s := range tt.inMsg {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q lacks %q", msg, s)
				}
			}
			if asked != 0 || modelRequests(dbl) != 0 {
				t.Errorf("questions asked %d, model requests %d; want none", asked, modelRequests(dbl))
			}
			if strings.Contains(msg, "test-key-") {
				t.Errorf("the API key's value is in the message: %q", msg)
			}
		})
	}
}
