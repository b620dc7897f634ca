package review

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// clean is a complete READY envelope; tests derive variants from it.
const clean = `Looked at the diff.

REVIEW: 1
SNAPSHOT: 0123456789abcdef0123456789abcdef01234567
COVERAGE: COMPLETE
VERDICT: READY
SUMMARY: No blockers.

[P3] internal/a.go:12 — naming nit
Problem: name is vague.
Evidence: func do()
Fix: rename to doWork.

CHECKS: typecheck=PASS; tests=NOT_RUN
END_REVIEW`

func with(old, new string) string { return strings.Replace(clean, old, new, 1) }

func TestGateRules(t *testing.T) {
	tests := []struct {
		name      string
		answer    string
		truncated bool
		want      Verdict
		reason    string
	}{
		{"clean envelope", clean, false, Ready, ""},
		{"trailing blank lines after END_REVIEW", clean + "\n\n  \n", false, Ready, ""},
		{"headers case-insensitive", strings.ToLower(clean[:0]) + with("VERDICT: READY", "verdict: ready"), false, Ready, ""},
		{"CRLF line ends", strings.ReplaceAll(clean, "\n", "\r\n"), false, Ready, ""},
		{"P1 finding", with("[P3]", "[P1]"), false, Blocked, ReasonBlocker},
		{"P2 finding", with("[P3]", "[P2]"), false, Blocked, ReasonBlocker},
		{"lowercase p2", with("[P3]", "[p2]"), false, Blocked, ReasonBlocker},
		{"P1 quoted in prose", with("name is vague.", `the doc says "[P1]" here.`), false, Blocked, ReasonBlocker},
		{"P2 outside the envelope, after END_REVIEW", clean + "\n[P2] b.go:3 — late\n", false, Blocked, ReasonBlocker},
		{"P2 before the envelope", "[P2] b.go:3 — early\n" + clean, false, Blocked, ReasonBlocker},
		{"blocker wins over partial and truncation", with("[P3]", "[P1]"), true, Blocked, ReasonBlocker},
		{"partial coverage", with("COMPLETE", "PARTIAL"), false, Blocked, ReasonPartial},
		{"partial wins over truncated", with("COMPLETE", "partial"), true, Blocked, ReasonPartial},
		{"truncated", clean, true, Blocked, ReasonTruncated},
		{"truncated wins over incomplete", with("END_REVIEW", ""), true, Blocked, ReasonTruncated},
		{"missing REVIEW", with("REVIEW: 1\n", ""), false, Blocked, ReasonIncomplete},
		{"empty REVIEW", with("REVIEW: 1", "REVIEW:   "), false, Blocked, ReasonIncomplete},
		{"missing SNAPSHOT", with("SNAPSHOT: 0123456789abcdef0123456789abcdef01234567\n", ""), false, Blocked, ReasonIncomplete},
		{"missing CHECKS", with("CHECKS: typecheck=PASS; tests=NOT_RUN\n", ""), false, Blocked, ReasonIncomplete},
		{"empty CHECKS", with("CHECKS: typecheck=PASS; tests=NOT_RUN", "CHECKS:"), false, Blocked, ReasonIncomplete},
		{"missing COVERAGE", with("COVERAGE: COMPLETE\n", ""), false, Blocked, ReasonIncomplete},
		{"bogus COVERAGE", with("COVERAGE: COMPLETE", "COVERAGE: MOSTLY"), false, Blocked, ReasonIncomplete},
		{"missing VERDICT", with("VERDICT: READY\n", ""), false, Blocked, ReasonIncomplete},
		{"READY_BOGUS", with("VERDICT: READY", "VERDICT: READY_BOGUS"), false, Blocked, ReasonIncomplete},
		{"markdown verdict", with("VERDICT: READY", "VERDICT: **READY**"), false, Blocked, ReasonIncomplete},
		{"duplicate VERDICT", with("VERDICT: READY", "VERDICT: READY\nVERDICT: READY"), false, Blocked, ReasonIncomplete},
		{"duplicate REVIEW", with("REVIEW: 1", "REVIEW: 1\nreview: 2"), false, Blocked, ReasonIncomplete},
		{"duplicate SNAPSHOT", with("SNAPSHOT:", "SNAPSHOT: x\nSNAPSHOT:"), false, Blocked, ReasonIncomplete},
		{"duplicate COVERAGE", with("COVERAGE: COMPLETE", "COVERAGE: COMPLETE\nCOVERAGE: COMPLETE"), false, Blocked, ReasonIncomplete},
		{"duplicate CHECKS", with("CHECKS:", "CHECKS: typecheck=PASS; tests=PASS\nCHECKS:"), false, Blocked, ReasonIncomplete},
		{"missing END_REVIEW", with("END_REVIEW", ""), false, Blocked, ReasonIncomplete},
		{"END_REVIEW not last", clean + "\nThanks!", false, Blocked, ReasonIncomplete},
		{"duplicate END_REVIEW", with("CHECKS:", "END_REVIEW\nCHECKS:"), false, Blocked, ReasonIncomplete},
		{"END_REVIEW with junk", with("END_REVIEW", "END_REVIEW."), false, Blocked, ReasonIncomplete},
		{"indented header does not count", with("VERDICT: READY", "  VERDICT: READY"), false, Blocked, ReasonIncomplete},
		{"bulleted header does not count", with("REVIEW: 1", "- REVIEW: 1"), false, Blocked, ReasonIncomplete},
		{"header mid-line does not count", with("COVERAGE: COMPLETE", "Note COVERAGE: COMPLETE"), false, Blocked, ReasonIncomplete},
		{"indented END_REVIEW does not count", with("END_REVIEW", " END_REVIEW"), false, Blocked, ReasonIncomplete},
		{"prose Review: line is a duplicate header", "Review: looks fine\n" + clean, false, Blocked, ReasonIncomplete},
		{"no envelope at all", "The code looks great, ship it.", false, Blocked, ReasonIncomplete},
		{"model says BLOCKED without blocker", with("VERDICT: READY", "VERDICT: BLOCKED"), false, Blocked, ReasonNotReady},
		{"P3 only is not a blocker", with("[P3]", "[P3]"), false, Ready, ""},
		{"bracket P12 is not P1", with("name is vague.", "see [P12] and P1 and [P 1]"), false, Ready, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Gate(tt.answer, tt.truncated)
			if err != nil {
				t.Fatal(err)
			}
			if got.Verdict != tt.want || got.Reason != tt.reason {
				t.Errorf("Gate = (%s, %q), want (%s, %q)", got.Verdict, got.Reason, tt.want, tt.reason)
			}
			if got.Truncated != tt.truncated {
				t.Errorf("Truncated = %v, want %v", got.Truncated, tt.truncated)
			}
			checkRewrite(t, tt.answer, got)
		})
	}
}

// checkRewrite asserts the contract's text rule: READY leaves the text
// alone; BLOCKED leaves exactly one VERDICT header, "VERDICT: BLOCKED".
func checkRewrite(t *testing.T, answer string, got Result) {
	t.Helper()
	if got.Verdict == Ready {
		if got.Text != answer {
			t.Errorf("READY text changed:\n%s", cmp.Diff(answer, got.Text))
		}
		return
	}
	p := parse(got.Text)
	if h := p.headers["VERDICT"]; len(h) != 1 || h[0].value != "BLOCKED" {
		t.Errorf("blocked text has VERDICT headers %+v, want exactly one BLOCKED:\n%s", h, got.Text)
	}
}

func TestGateRewritePlacement(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"first verdict rewritten, duplicates dropped",
			"REVIEW: 1\nVERDICT: READY\nx\nverdict: ready\nEND_REVIEW",
			"REVIEW: 1\nVERDICT: BLOCKED\nx\nEND_REVIEW"},
		{"no verdict: appended",
			"just prose",
			"just prose\n\nVERDICT: BLOCKED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := Gate(tt.in, false)
			if diff := cmp.Diff(tt.want, got.Text); diff != "" {
				t.Errorf("Text mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGateEmptyAnswerIsError(t *testing.T) {
	for _, in := range []string{"", "  \n\t\n"} {
		got, err := Gate(in, false)
		if !errors.Is(err, ErrEmptyAnswer) {
			t.Fatalf("Gate(%q) err = %v, want ErrEmptyAnswer", in, err)
		}
		want := Result{Verdict: Blocked, Reason: ErrEmptyAnswer.Message}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Gate(%q) mismatch (-want +got):\n%s", in, diff)
		}
		if strings.Contains(strings.ToLower(got.Reason), "clean") {
			t.Errorf("empty answer described as clean: %q", got.Reason)
		}
	}
}

func TestFromError(t *testing.T) {
	got := FromError(errors.New("boom: internal detail"))
	if got.Verdict != Blocked || got.Reason != "internal error" {
		t.Errorf("FromError = %+v, want BLOCKED with the public message only", got)
	}
}
