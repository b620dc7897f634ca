package review

import (
	"strings"
	"testing"
)

// FuzzGate: whatever the model writes, READY implies no blocker marker and
// a complete envelope, and BLOCKED text carries exactly one VERDICT header.
func FuzzGate(f *testing.F) {
	f.Add(clean, false)
	f.Add(with("[P3]", "[P2]"), false)
	f.Add("VERDICT: READY\nEND_REVIEW", true)
	f.Add(`{"review":"1"}`, false)
	f.Fuzz(func(t *testing.T, answer string, truncated bool) {
		got, err := Gate(answer, truncated)
		if err != nil {
			if strings.TrimSpace(answer) != "" {
				t.Fatalf("error for non-empty answer: %v", err)
			}
			return
		}
		if got.Verdict == Ready {
			if truncated || blockerRE().MatchString(answer) || !parse(got.Text).complete() {
				t.Fatalf("READY for %q (truncated=%v)", answer, truncated)
			}
			return
		}
		checkRewrite(t, answer, got)
	})
}
