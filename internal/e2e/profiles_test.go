package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

func listed(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// TestToolsListPerProfile: tools/list matches the contract (§1) for each
// way of choosing a profile.
func TestToolsListPerProfile(t *testing.T) {
	canonical := []string{"cancel", "consult", "delegate", "doctor", "issue", "request_admission", "review", "session"} // aliases unlisted (issue 19 item 17)
	compact := []string{"cancel", "doctor", "run", "session"}
	tests := []struct {
		name   string
		extra  []string
		config string
		want   []string
	}{
		{"default", nil, "", canonical},
		{"env compact", []string{"COAGENT8_TOOL_PROFILE=compact"}, "", compact},
		{"lowercase env compact", []string{"coagent8_TOOL_PROFILE=compact"}, "", compact},
		{"config compact", nil, `{"schemaVersion":1,"toolProfile":"compact"}`, compact},
		{"env canonical over config compact", []string{"COAGENT8_TOOL_PROFILE=canonical"}, `{"schemaVersion":1,"toolProfile":"compact"}`, canonical},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			environ := env(t, "http://127.0.0.1:9", tt.extra...)
			if tt.config != "" {
				writeConfig(t, filepath.Join(homeOf(environ), ".coagent8", "config.json"), tt.config)
			}
			if d := cmp.Diff(tt.want, listed(t, connect(t, environ))); d != "" {
				t.Fatalf("tools/list (-want +got):\n%s", d)
			}
		})
	}
}

// TestHiddenToolsAndAliases: in the compact profile the unadvertised
// tools (consult, the deprecated aliases) are still callable, the aliases
// send consult's prompt with their task type and warn of deprecation, and
// run dispatches to each action with that action's own strict schema.
func TestHiddenToolsAndAliases(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "Answer from the double."}})
	cs := connect(t, env(t, dbl.URL(), "COAGENT8_TOOL_PROFILE=compact"))
	ws := t.TempDir()
	tests := []struct {
		tool       string
		args       map[string]any
		wantPrompt []string
		wantWarn   string
	}{
		{"consult", map[string]any{"proposal": "HIDDEN_CONSULT"}, []string{"[TASK: CONSULTATION]", "HIDDEN_CONSULT"}, ""},
		{"analyze", map[string]any{"task": "ANALYZE_TASK", "context_files": []string{"a.go"}},
			[]string{"[TASK: ARCHITECTURE REVIEW]", "ANALYZE_TASK", "- a.go"}, `use consult with task_type "architecture"`},
		{"debug", map[string]any{"error_message": "DEBUG_ERR", "context": "DEBUG_CTX"},
			[]string{"[TASK: DEBUGGING]", "DEBUG_ERR", "DEBUG_CTX"}, `use consult with task_type "debug"`},
		{"implement", map[string]any{"specification": "IMPL_SPEC"},
			[]string{"[TASK: IMPLEMENTATION PLANNING]", "IMPL_SPEC"}, `use consult with task_type "implementation"`},
		{"run", map[string]any{"action": "debug", "error_message": "RUN_DEBUG_ERR"},
			[]string{"[TASK: DEBUGGING]", "RUN_DEBUG_ERR"}, `use consult with task_type "debug"`},
		{"run", map[string]any{"action": "consult", "proposal": "RUN_CONSULT", "task_type": "architecture"},
			[]string{"[TASK: ARCHITECTURE REVIEW]", "RUN_CONSULT"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+strings.Join(tt.wantPrompt[1:2], ""), func(t *testing.T) {
			args := map[string]any{"backend": "claude", "workspace_path": ws}
			for k, v := range tt.args {
				args[k] = v
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: args})
			if err != nil {
				t.Fatalf("%s: %v", tt.tool, err)
			}
			sc := structured(t, res)
			if res.IsError || sc["status"] != "completed" || sc["output"] != "Answer from the double." {
				t.Fatalf("%s structuredContent = %v", tt.tool, sc)
			}
			warnings := strings.Join(toStrings(sc["warnings"]), "\n")
			if (tt.wantWarn != "") != strings.Contains(warnings, "deprecated") || !strings.Contains(warnings, tt.wantWarn) {
				t.Fatalf("%s warnings = %q, want %q", tt.tool, warnings, tt.wantWarn)
			}
			body := lastModelBody(dbl)
			for _, want := range tt.wantPrompt {
				if !strings.Contains(body, want) {
					t.Errorf("%s: prompt lacks %q", tt.tool, want)
				}
			}
		})
	}
}

// TestRunRejectsFieldsOfOtherActions: run validates the chosen action's
// fields with that tool's schema, so a review field on a consult action
// (or an unknown action) is invalid params and reaches no backend.
func TestRunRejectsFieldsOfOtherActions(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{})
	cs := connectVersion(t, env(t, dbl.URL()), legacy) // -32602 before 2025-11-25 (issue 19 item 3)
	for _, args := range []map[string]any{
		{"action": "consult", "proposal": "p", "scope": "staged"},
		{"action": "analyze", "proposal": "p"},
		{"action": "issue", "backend": "claude"},
		{"action": "delete"},
		{"proposal": "no action"},
	} {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run", Arguments: args})
		var werr *jsonrpc.Error
		if err == nil || !errorsAs(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("run %v: err = %v, want invalid params", args, err)
		}
	}
	if n := len(dbl.Requests()); n != 0 {
		t.Fatalf("%d provider requests after rejected calls", n)
	}
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// lastModelBody is the body of the last model request the double got.
func lastModelBody(d *providertest.Anthropic) string {
	reqs := d.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if strings.HasPrefix(reqs[i].Path, "/v1/messages") && !strings.Contains(reqs[i].Path, "count_tokens") {
			return string(reqs[i].Body)
		}
	}
	return ""
}

// TestRunDispatchesReviewAndIssue: run's review and issue actions return
// what the tools themselves return.
func TestRunDispatchesReviewAndIssue(t *testing.T) {
	ws, sha := gitRepo(t)
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: envelope(sha, "READY", p2Finding)}})
	cs := connect(t, env(t, dbl.URL(), "COAGENT8_TOOL_PROFILE=compact"))
	call := func(args map[string]any) map[string]any {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run", Arguments: args})
		if err != nil {
			t.Fatalf("run %v: %v", args, err)
		}
		return structured(t, res)
	}
	rv := call(map[string]any{"action": "review", "backend": "claude", "workspace_path": ws, "instructions": "FOCUS_ON_DIVISION"})
	if rv["verdict"] != "BLOCKED" || rv["reason"] != "Blocker issue [P1/P2] reported" {
		t.Fatalf("run review = %v", rv)
	}
	if !strings.Contains(lastModelBody(dbl), "FOCUS_ON_DIVISION") {
		t.Error("the review prompt lacks the instructions")
	}
	is := call(map[string]any{"action": "issue", "error_message": "RUN_ISSUE", "include_doctor": false})
	body, _ := is["body"].(string)
	if is["title"] != "[Bug]: RUN_ISSUE" || strings.Contains(body, "Doctor summary") {
		t.Fatalf("run issue = %v", is)
	}
}
