package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/adapter/agy"
	"github.com/coagent8/coagent8/internal/review"
	"github.com/coagent8/coagent8/internal/turn"
)

const sha = "0123456789abcdef0123456789abcdef01234567"

func envelopeText(verdict, findings string) string {
	return "REVIEW: 1\nSNAPSHOT: " + sha + "\nCOVERAGE: COMPLETE\nVERDICT: " + verdict + "\nSUMMARY: s\n" + findings +
		"CHECKS: typecheck=PASS; tests=NOT_RUN\nEND_REVIEW"
}

func TestGateOutcome(t *testing.T) {
	scope := &ReviewScope{Commit: sha}
	tests := []struct {
		name                    string
		in                      turn.Outcome
		wantVerdict, wantReason string
		wantErr                 string
		wantNilFindings         bool
	}{
		{"clean", turn.Outcome{Status: turn.Completed, Output: envelopeText("READY", "")}, "READY", "", "", false},
		{"model says blocked, no finding", turn.Outcome{Status: turn.Completed, Output: envelopeText("BLOCKED", "")},
			"BLOCKED", review.ReasonNotReady, "", false},
		{"P1 finding", turn.Outcome{Status: turn.Completed, Output: envelopeText("READY", "[P1] a.go:1 t\nProblem: p\nEvidence: e\nFix: f\n")},
			"BLOCKED", review.ReasonBlocker, "", false},
		{"truncated answer", turn.Outcome{Status: turn.Completed, Output: envelopeText("READY", ""), Truncated: true},
			"BLOCKED", review.ReasonTruncated, "", true},
		{"no envelope", turn.Outcome{Status: turn.Completed, Output: "fine"}, "BLOCKED", review.ReasonIncomplete, "", true},
		{"empty answer is an error", turn.Outcome{Status: turn.Completed, Output: " \n"}, "BLOCKED",
			review.ErrEmptyAnswer.Message, "PROTOCOL_ERROR", true},
		{"execution error", turn.Outcome{Status: turn.TimedOut, Error: &turn.Error{Code: "TIMEOUT", Message: "CLI deadline exceeded (100 ms)."}},
			"BLOCKED", "CLI deadline exceeded (100 ms).", "TIMEOUT", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := gateOutcome(tt.in, scope)
			errCode := ""
			if got.Error != nil {
				errCode = got.Error.Code
			}
			g := []any{got.Verdict, got.Reason, string(got.Review.Verdict), got.Review.Reason, errCode, got.Review.Envelope.Findings == nil}
			w := []any{tt.wantVerdict, tt.wantReason, tt.wantVerdict, tt.wantReason, tt.wantErr, tt.wantNilFindings}
			if d := cmp.Diff(w, g); d != "" {
				t.Errorf("gateOutcome (-want +got):\n%s", d)
			}
			if got.Verdict == "BLOCKED" && got.Error == nil && !strings.Contains(got.Output, "VERDICT: BLOCKED") {
				t.Errorf("blocked output keeps the model's verdict:\n%s", got.Output)
			}
		})
	}
}

func TestSnapshotMismatch(t *testing.T) {
	tests := []struct {
		claimed string
		scope   *ReviewScope
		warn    bool
	}{
		{sha, &ReviewScope{Commit: sha}, false},
		{sha[:7], &ReviewScope{Commit: sha}, false},
		{strings.ToUpper(sha[:10]), &ReviewScope{Commit: sha}, false},
		{sha[:6], &ReviewScope{Commit: sha}, true},
		{"fedcba9", &ReviewScope{Commit: sha}, true},
		{"NO_COMMIT", &ReviewScope{}, false},
		{"", &ReviewScope{Commit: sha}, false},
		{sha, nil, false},
	}
	for _, tt := range tests {
		if got := snapshotMismatch(tt.claimed, tt.scope) != ""; got != tt.warn {
			t.Errorf("snapshotMismatch(%q, %v) warns = %v, want %v", tt.claimed, tt.scope, got, tt.warn)
		}
	}
}

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
	for _, n := range []string{"analyze", "cancel", "consult", "debug", "doctor", "implement", "issue", "review", "run", "session"} {
		all.Tools = append(all.Tools, &mcp.Tool{Name: n})
	}
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { return all, nil }
	for profile, want := range map[string][]string{
		"":        {"analyze", "cancel", "consult", "debug", "doctor", "implement", "issue", "review", "session"},
		Canonical: {"analyze", "cancel", "consult", "debug", "doctor", "implement", "issue", "review", "session"},
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
