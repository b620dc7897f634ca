package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/adapter/agy"
)

func TestAliasConsult(t *testing.T) {
	tf := TurnFields{Backend: "claude", WorkspacePath: "/w", Model: "m", ReasoningEffort: "low", SessionHandle: "h", SessionMode: "auto", TimeoutMS: 500}
	base := ConsultArgs{Backend: "claude", WorkspacePath: "/w", Model: "m", ReasoningEffort: "low", SessionHandle: "h", SessionMode: "auto", TimeoutMS: 500}
	with := func(c ConsultArgs, f func(*ConsultArgs)) ConsultArgs { f(&c); return c }
	tests := []struct {
		args     any
		taskType string
		want     ConsultArgs
	}{
		{AnalyzeArgs{Task: "t", ContextFiles: []string{"a.go"}, TurnFields: tf}, "architecture",
			with(base, func(c *ConsultArgs) { c.Proposal, c.ContextFiles, c.TaskType = "t", []string{"a.go"}, "architecture" })},
		{DebugArgs{ErrorMessage: "e", Context: " c ", TurnFields: tf}, "debug",
			with(base, func(c *ConsultArgs) { c.Proposal, c.TaskType = "e\n\nCONTEXT:\nc", "debug" })},
		{DebugArgs{ErrorMessage: "e", TurnFields: tf}, "debug",
			with(base, func(c *ConsultArgs) { c.Proposal, c.TaskType = "e", "debug" })},
		{ImplementArgs{Specification: "s", ContextFiles: []string{"b.go"}, TurnFields: tf}, "implementation",
			with(base, func(c *ConsultArgs) { c.Proposal, c.ContextFiles, c.TaskType = "s", []string{"b.go"}, "implementation" })},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, aliasConsult(tt.args, tt.taskType)); d != "" {
			t.Errorf("aliasConsult(%T) (-want +got):\n%s", tt.args, d)
		}
	}
}

// TestAgyLimitationInDescriptions: the turn tools state the agy
// limitation and nothing else claims isolation or a guaranteed read-only
// boundary.
func TestAgyLimitationInDescriptions(t *testing.T) {
	s := &Server{}
	for _, f := range []toolFactory{s.consultTool, s.reviewTool, func() (*mcp.Tool, mcp.ToolHandler) { return s.runTool(nil) }} {
		tool, _ := f()
		if !strings.Contains(tool.Description, agy.Limitation) {
			t.Errorf("%s description lacks the agy limitation", tool.Name)
		}
		rest := strings.ToLower(strings.ReplaceAll(tool.Description, agy.Limitation, ""))
		for _, claim := range []string{"isolated", "read-only guaranteed", "guaranteed read-only"} {
			if strings.Contains(rest, claim) {
				t.Errorf("%s description claims %q", tool.Name, claim)
			}
		}
	}
}

func TestListFilter(t *testing.T) {
	all := &mcp.ListToolsResult{}
	for _, n := range []string{"analyze", "cancel", "consult", "debug", "doctor", "implement", "issue", "request_admission", "review", "run", "session"} {
		all.Tools = append(all.Tools, &mcp.Tool{Name: n})
	}
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { return all, nil }
	for profile, want := range map[string][]string{
		// The deprecated aliases are callable but advertised by no profile
		// (issue 19 item 17).
		"":        {"cancel", "consult", "doctor", "issue", "request_admission", "review", "session"},
		Canonical: {"cancel", "consult", "doctor", "issue", "request_admission", "review", "session"},
		Compact:   {"cancel", "doctor", "run", "session"},
	} {
		res, err := listFilter(profile)(next)(context.Background(), "tools/list", nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tl := range res.(*mcp.ListToolsResult).Tools {
			got = append(got, tl.Name)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("profile %q (-want +got):\n%s", profile, d)
		}
		if other, _ := listFilter(profile)(next)(context.Background(), "tools/call", nil); len(other.(*mcp.ListToolsResult).Tools) != len(all.Tools) {
			t.Errorf("profile %q filtered a method other than tools/list", profile)
		}
	}
}
