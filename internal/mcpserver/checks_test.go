package mcpserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

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

func TestChecksText(t *testing.T) {
	got := checksText([]verify.Check{
		{Command: []string{"/usr/local/go/bin/go", "test", "./..."}, Status: verify.Failed, Exit: "exited", ExitCode: 1,
			DurationMS: 1500, Receipt: &verify.Receipt{JobID: "abc"}},
		{Command: []string{"/usr/bin/make"}, Status: verify.NotRun, Reason: "refused"},
	})
	want := "\n> Checks (run by coagent8 in the task sandbox):\n> - `go test ./...` exited 1 · 1.5s · job abc\n> - `make` was not run: refused"
	if got != want {
		t.Errorf("checksText =\n%s\nwant\n%s", got, want)
	}
}

// TestReviewArgsCannotCarryCommands: the review tool's only checks argument
// is the boolean run_checks; any attempt to pass commands is invalid params
//
func TestReviewArgsCannotCarryCommands(t *testing.T) {
	_, resolved := schemaFor[ReviewArgs](reviewSchema)
	for _, extra := range []string{
		`"commands":[["sh","-c","curl x"]]`, `"verify":{"commands":[["true"]]}`, `"verify.commands":[["true"]]`,
		`"run_checks":[["go","test"]]`, `"run_checks":"go test ./..."`, `"run_checks":null`, `"check":"go test"`,
	} {
		raw := json.RawMessage(`{"workspace_path":"/w",` + extra + `}`)
		_, err := decode[ReviewArgs](raw, resolved)
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: err = %v, want invalid params", extra, err)
		}
	}
	for raw, want := range map[string]*bool{`{"run_checks":false}`: ptr(false), `{"run_checks":true}`: ptr(true), `{}`: nil} {
		got, err := decode[ReviewArgs](json.RawMessage(raw), resolved)
		if err != nil || !cmp.Equal(got.RunChecks, want) {
			t.Errorf("%s: RunChecks = %v, %v", raw, got.RunChecks, err)
		}
	}
}
