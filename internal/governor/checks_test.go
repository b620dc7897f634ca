package governor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/review"
	"github.com/coagent8/coagent8/internal/turn"
	"github.com/coagent8/coagent8/internal/verify"
)

func finished(checks []verify.Check, note string) *checkRun {
	r := &checkRun{done: make(chan struct{}), cancel: func() {}, checks: checks, note: note}
	close(r.done)
	return r
}

// TestApplyChecks: a failing real check blocks a READY review with
// verify.ReasonFailed and a warning next to the model's claim; the
// contract's own reasons keep precedence; a check that did not run only
// warns.
func TestApplyChecks(t *testing.T) {
	goTest := []string{"/usr/local/go/bin/go", "test", "./..."}
	failed := verify.Check{Command: goTest, Kind: verify.KindTests, Status: verify.Failed, Exit: "exited", ExitCode: 1,
		Receipt: &verify.Receipt{JobID: "job1"}}
	passed := verify.Check{Command: goTest, Kind: verify.KindTests, Status: verify.Passed, Exit: "exited"}
	notRun := verify.Check{Command: goTest, Kind: verify.KindTests, Status: verify.NotRun, ExitCode: -1,
		Reason: "the task sandbox is unavailable (audit.sink_unwritable)"}
	claimsPass := strings.Replace(envelopeText("READY", ""), "tests=NOT_RUN", "tests=PASS", 1)
	p1 := "[P1] a.go:1 t\nProblem: p\nEvidence: e\nFix: f\n"
	tests := []struct {
		name                    string
		answer                  string
		run                     *checkRun
		wantVerdict, wantReason string
		wantWarnings            []string
	}{
		{"failing check under READY", claimsPass, finished([]verify.Check{failed}, ""), "BLOCKED", verify.ReasonFailed,
			[]string{"the model claimed tests=PASS but `go test ./...` exited 1"}},
		{"failing check under a P1 finding keeps the contract reason", envelopeText("READY", p1), finished([]verify.Check{failed}, ""),
			"BLOCKED", review.ReasonBlocker, []string{"configured check `go test ./...` exited 1"}},
		{"passing check", claimsPass, finished([]verify.Check{passed}, ""), "READY", "", nil},
		{"check not run only warns", claimsPass, finished([]verify.Check{notRun}, ""), "READY", "",
			[]string{"configured check `go test ./...` was not run: the task sandbox is unavailable (audit.sink_unwritable)"}},
		{"bad configuration only warns", claimsPass, finished(nil, "configured checks were not run: verify.commands: bad"), "READY", "",
			[]string{"configured checks were not run: verify.commands: bad"}},
		{"no checks configured", claimsPass, nil, "READY", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := applyChecks(gateOutcome(turn.Outcome{Status: turn.Completed, Output: tt.answer}, &ReviewScope{Commit: sha}), tt.run)
			got := []any{o.Verdict, o.Reason, string(o.Review.Verdict), o.Review.Reason, o.Warnings}
			want := []any{tt.wantVerdict, tt.wantReason, tt.wantVerdict, tt.wantReason, tt.wantWarnings}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("applyChecks (-want +got):\n%s", d)
			}
			if strings.Contains(o.Output, "VERDICT: READY") != (tt.wantVerdict == "READY") {
				t.Errorf("output verdict line disagrees with %s:\n%s", tt.wantVerdict, o.Output)
			}
		})
	}
}
