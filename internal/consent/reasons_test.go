package consent

import (
	"slices"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/governor"
)

// TestNoWayAroundReasonsAreProduced: every reason governor.NoWayAround
// names is one a real answer produces here (the list cannot name a reason
// consent never gives, nor drift from its spelling), and the refusals
// nobody gave (a dismissal, no form support) are not on it.
func TestNoWayAroundReasonsAreProduced(t *testing.T) {
	ok := accept(map[string]any{"approve": true})
	tests := []struct {
		name        string
		answer      answer
		elicit      bool
		beforeRetry func(h *harness)
		want        string // the reason produced
		noWay       bool
	}{
		{"user declined", &mcpDecline, true, nil, ReasonDeclined, true},
		{"approve false", accept(map[string]any{"approve": false}), true, nil, ReasonNotApproved, true},
		{"no approve", accept(map[string]any{}), true, nil, ReasonInvalidAnswer, true},
		{"state for another model", ok, true, func(h *harness) { h.decision.Model = "gpt-y" }, ReasonInvalidState, true},
		{"dismissed", &mcpCancel, true, nil, ReasonCancelled, false},
		{"no form support", nil, false, nil, ReasonUnsupportedClient, false},
	}
	var produced []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, askDecision(true), time.Minute)
			elicit := func() answer { return nil }
			if !tt.elicit {
				elicit = nil
			}
			cs := h.connect(t, "", elicit, true)
			var before func()
			if tt.beforeRetry != nil {
				before = func() { tt.beforeRetry(h) }
			}
			h.callManual(t, cs, tt.answer, before)
			fe := h.last.Load()
			if fe == nil {
				t.Fatal("no refusal")
			}
			if fe.Reason != tt.want {
				t.Fatalf("reason %q, want %q", fe.Reason, tt.want)
			}
			produced = append(produced, fe.Reason)
			if got := governor.NoWayAround(fe.Reason); got != tt.noWay {
				t.Errorf("NoWayAround(%q) = %v, want %v", fe.Reason, got, tt.noWay)
			}
		})
	}
	for _, r := range governor.NoWayAroundReasons() {
		if !slices.Contains(produced, r) {
			t.Errorf("governor.NoWayAround names %q, which no answer produced (produced: %q)", r, produced)
		}
	}
}
