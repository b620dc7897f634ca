package governor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
