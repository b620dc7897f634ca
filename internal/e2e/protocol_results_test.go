package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// legacy is the last revision before 2025-11-25, under which invalid
// tool arguments stay JSON-RPC -32602.
const legacy = "2025-06-18"

// connectVersion connects like connect, asking for protocol revision v.
func connectVersion(t *testing.T, environ []string, v string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary)
	cmd.Env = environ
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		t.Fatalf("connect %s: %v", v, err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != v {
		t.Fatalf("negotiated %s, want %s", got, v)
	}
	return cs
}

// outputSchemas returns every advertised tool's resolved outputSchema by
// name. The deprecated aliases are not advertised (issue 19 item 17);
// they return consult's Outcome, so they are checked against consult's.
func outputSchemas(t *testing.T, cs *mcp.ClientSession) map[string]*jsonschema.Resolved {
	t.Helper()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*jsonschema.Resolved{}
	for _, tl := range list.Tools {
		if tl.OutputSchema == nil {
			continue
		}
		b, _ := json.Marshal(tl.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s outputSchema: %v", tl.Name, err)
		}
		out[tl.Name] = r
	}
	for _, a := range []string{"analyze", "debug", "implement"} {
		out[a] = out["consult"]
	}
	return out
}

type resultCase struct {
	tool     string
	args     map[string]any
	wantErr  string // "" success; else the error code in structuredContent
	badInput bool   // refused by the input schema
}

// resultCases are every tool's success and error paths that need no
// second backend: ws is an empty directory, not a Git work tree.
func resultCases(ws string) []resultCase {
	missing := "/nonexistent/coagent8-e2e"
	return []resultCase{
		{"consult", map[string]any{"proposal": "p", "backend": "claude", "workspace_path": ws}, "", false},
		{"consult", map[string]any{"proposal": "p", "backend": "claude", "workspace_path": missing}, "INVALID_INPUT", false},
		{"consult", map[string]any{"proposal": "p", "backend": "claude"}, "INVALID_INPUT", true},
		{"consult", map[string]any{"proposal": "p", "workspace_path": ws, "approve": true}, "INVALID_INPUT", true},
		{"analyze", map[string]any{"task": "t", "backend": "claude", "workspace_path": ws}, "", false},
		{"debug", map[string]any{"error_message": "e", "workspace_path": missing}, "INVALID_INPUT", false},
		{"implement", map[string]any{"workspace_path": ws}, "INVALID_INPUT", true},
		{"review", map[string]any{"backend": "claude", "workspace_path": ws}, "*", false},
		{"review", map[string]any{"backend": "claude"}, "INVALID_INPUT", true},
		{"doctor", map[string]any{}, "", false},
		{"doctor", map[string]any{"verbose": true}, "INVALID_INPUT", true},
		{"session", map[string]any{"action": "list", "workspace_path": ws}, "", false},
		{"session", map[string]any{"action": "status", "workspace_path": ws, "session_handle": "c8_nope"}, "*", false},
		{"session", map[string]any{"action": "drop", "workspace_path": ws}, "INVALID_INPUT", true},
		{"cancel", map[string]any{"session_handle": "c8_nope", "workspace_path": ws}, "*", false},
		{"cancel", map[string]any{"session_handle": "c8_nope", "workspace_path": missing}, "INVALID_INPUT", false},
		{"cancel", map[string]any{"session_handle": "c8_nope"}, "INVALID_INPUT", true},
		{"issue", map[string]any{"error_message": "it broke", "include_doctor": false}, "", false},
		{"issue", map[string]any{"title": "x"}, "INVALID_INPUT", true},
		{"run", map[string]any{"action": "issue", "include_doctor": false}, "", false},
		{"run", map[string]any{"action": "consult", "proposal": "p"}, "INVALID_INPUT", true},
		{"run", map[string]any{"action": "delete"}, "INVALID_INPUT", true},
		// delegate's success result is checked against its outputSchema in
		// TestDelegateEndToEnd (it needs a real job).
		{"delegate", map[string]any{"task": "t", "workspace_path": ws, "budget": map[string]any{"max_usd": 1}}, "INVALID_INPUT", false},
		{"delegate", map[string]any{"task": "", "workspace_path": ws, "budget": map[string]any{"max_usd": 1}}, "INVALID_INPUT", false},
		{"delegate", map[string]any{"task": "t", "workspace_path": ws, "backend": "agy", "budget": map[string]any{"max_usd": 1}}, "UNSUPPORTED", false},
		{"delegate", map[string]any{"action": "status", "job": "job_nope", "workspace_path": ws}, "*", false},
		{"delegate", map[string]any{"task": "t"}, "INVALID_INPUT", true},
		{"delegate", map[string]any{"task": "t", "workspace_path": ws, "approve": true}, "INVALID_INPUT", true},
		// request_admission's success result is checked in TestRequestAdmission
		// (it needs a finished job and an approving user).
		{"request_admission", map[string]any{"job": "job_nope", "workspace_path": ws}, "*", false},
		{"request_admission", map[string]any{"job": "job_nope"}, "INVALID_INPUT", true},
		{"request_admission", map[string]any{"job": "job_nope", "workspace_path": ws, "approve": true}, "INVALID_INPUT", true},
	}
}

// TestProtocolEveryResultMeetsItsOutputSchema (issue 19 items 2, 3):
// under 2025-11-25 every result of every tool, each error path included,
// meets the tool's advertised outputSchema, and invalid arguments are a
// tool result with isError true and INVALID_INPUT; under 2025-06-18 the
// same arguments are JSON-RPC -32602 as before.
func TestProtocolEveryResultMeetsItsOutputSchema(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "Answer from the double."}})
	environ := env(t, dbl.URL())
	modern := connectVersion(t, environ, "2025-11-25")
	old := connectVersion(t, environ, legacy)
	schemas := outputSchemas(t, modern)
	ws := t.TempDir()
	for _, tc := range resultCases(ws) {
		t.Run(tc.tool+" "+tc.wantErr, func(t *testing.T) {
			res, err := modern.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("2025-11-25 %s %v: %v", tc.tool, tc.args, err)
			}
			sc := structured(t, res)
			if got := errorCode(sc); res.IsError != (tc.wantErr != "") || (tc.wantErr != "*" && got != tc.wantErr) {
				t.Fatalf("2025-11-25 %s %v: isError %v code %q, want %q; %v", tc.tool, tc.args, res.IsError, got, tc.wantErr, sc)
			}
			if r := schemas[tc.tool]; r != nil {
				if err := r.Validate(sc); err != nil {
					t.Fatalf("%s result does not meet its outputSchema: %v\n%v", tc.tool, err, sc)
				}
			} else if tc.tool != "session" && tc.tool != "run" {
				t.Fatalf("%s advertises no outputSchema", tc.tool)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if tc.badInput && !strings.Contains(text, "INVALID_INPUT") {
				t.Errorf("input error text %q does not name INVALID_INPUT", text)
			}
			if !tc.badInput {
				return
			}
			_, err = old.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("2025-06-18 %s %v: err = %v, want -32602", tc.tool, tc.args, err)
			}
		})
	}
}

// TestProtocolAnnotationsAndListing (issue 19 items 4, 17): session is
// destructive (close deletes history), cancel is neither read-only nor
// destructive and idempotent, consult and review require workspace_path,
// and the deprecated aliases are not listed but still answer.
func TestProtocolAnnotationsAndListing(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "Answer from the double."}})
	cs := connect(t, env(t, dbl.URL()))
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		tools[tl.Name] = tl
	}
	for _, a := range []string{"analyze", "debug", "implement"} {
		if tools[a] != nil {
			t.Errorf("deprecated alias %s is advertised", a)
		}
	}
	if a := tools["session"].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint || a.ReadOnlyHint {
		t.Errorf("session annotations = %+v, want destructive", a)
	}
	if a := tools["cancel"].Annotations; a == nil || a.DestructiveHint == nil || *a.DestructiveHint || a.ReadOnlyHint || !a.IdempotentHint {
		t.Errorf("cancel annotations = %+v, want not destructive, not read-only, idempotent", a)
	}
	for _, name := range []string{"consult", "review"} {
		b, _ := json.Marshal(tools[name].InputSchema)
		var s struct {
			Required   []string                  `json:"required"`
			Properties map[string]map[string]any `json:"properties"`
		}
		json.Unmarshal(b, &s)
		if !slices.Contains(s.Required, "workspace_path") {
			t.Errorf("%s required = %v, want workspace_path", name, s.Required)
		}
		if d, _ := s.Properties["workspace_path"]["description"].(string); strings.Contains(d, "(required)") {
			t.Errorf("%s workspace_path description repeats what required says: %q", name, d)
		}
	}
	sc, res := call(t, cs, "analyze", map[string]any{"task": "t", "backend": "claude", "workspace_path": t.TempDir()})
	if res.IsError || sc["status"] != "completed" {
		t.Fatalf("hidden alias analyze = %v", sc)
	}
}

// TestProtocolBackgroundTextSaysRunning (issue 19 item 8): a wait:false
// consult's text says the turn is running, matching structuredContent,
// never "finished" with an empty answer.
func TestProtocolBackgroundTextSaysRunning(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: slowReply(2)})
	cs := connect(t, env(t, dbl.URL()))
	sc, res := call(t, cs, "consult", map[string]any{"proposal": "background", "backend": "claude", "workspace_path": t.TempDir(), "wait": false})
	text := res.Content[0].(*mcp.TextContent).Text
	if sc["status"] != "running" || !strings.Contains(text, "running") || strings.Contains(text, "finished") {
		t.Fatalf("status %v, text:\n%s", sc["status"], text)
	}
}
