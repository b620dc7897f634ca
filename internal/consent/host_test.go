package consent

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
)

// TestHostAnswerWording: a decline or cancel that comes back faster than
// a person can answer (codex exec declines every elicitation at once) is
// worded as the host's, never as the user's; one after a human delay
// keeps the user's wording. Both MCP paths: the multi-round-trip input
// request and legacy elicitation/create (issue 19 items 15 and 16).
func TestHostAnswerWording(t *testing.T) {
	tests := []struct {
		name, protocol string
		answer         answer
		human          bool // the answer takes a person's time
		wantBy         string
		wantIn, notIn  string
	}{
		{"latest decline by host", "", &mcpDecline, false, "host", "the MCP host declined the approval request", "the user declined"},
		{"latest cancel by host", "", &mcpCancel, false, "host", "the MCP host cancelled the approval request", "dismissed"},
		{"latest decline by user", "", &mcpDecline, true, "user", "the user declined", "MCP host declined"},
		{"legacy decline by host", "2025-11-25", &mcpDecline, false, "host", "most likely never shown", "the user declined"},
		{"legacy cancel by host", "2025-06-18", &mcpCancel, false, "host", "the MCP host cancelled", "dismissed"},
		{"legacy cancel by user", "2025-11-25", &mcpCancel, true, "user", "cancelled or dismissed in the host", "MCP host cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, askDecision(false), time.Minute)
			wait := func() {
				if tt.human {
					h.clock.Add(3) // three seconds pass on the gate's clock
				}
			}
			var got string
			if tt.protocol == "" {
				cs := h.connect(t, "", func() answer { return nil }, true)
				got = h.callManual(t, cs, tt.answer, wait)
			} else {
				cs := h.connect(t, tt.protocol, func() answer { wait(); return tt.answer }, false)
				var err error
				if got, err = call(t, cs); err != nil {
					t.Fatal(err)
				}
			}
			fe := h.last.Load()
			if fe == nil {
				t.Fatalf("result %q, want a refusal", got)
			}
			if diff := cmp.Diff(tt.wantBy, fe.Details["answered_by"]); diff != "" {
				t.Errorf("answered_by (-want +got)\n%s", diff)
			}
			if !strings.Contains(fe.Message, tt.wantIn) || strings.Contains(fe.Message, tt.notIn) {
				t.Errorf("message %q: want %q and not %q", fe.Message, tt.wantIn, tt.notIn)
			}
			if fe.Details["answer_ms"] == "" {
				t.Errorf("no answer_ms detail: %v", fe.Details)
			}
		})
	}
}

// TestUserRefusalNamesNoWayAround: the refusal text reaches the calling
// agent. After the user's own no (a decline a person could have given,
// approve false) or a retry that carried no valid answer, it names no way
// to make the model run without asking (governance.models.allow): that
// would read as instructions to undo the user's answer. A refusal nobody
// gave (no form support, a time-out, the host's own instant decline)
// still names it.
func TestUserRefusalNamesNoWayAround(t *testing.T) {
	g, err := New(Options{Sink: &event.Memory{}})
	if err != nil {
		t.Fatal(err)
	}
	d := policy.Decision{Effect: policy.Ask, Backend: "claude", Model: "m-ask"}
	for _, tt := range []struct {
		name string
		err  error
		way  bool
	}{
		{"user declined", g.refuseAnswer(d, "decline", 5*time.Second), false},
		{"approve false", g.deny(d, ReasonNotApproved), false},
		{"forged or replayed state", g.deny(d, ReasonInvalidState), false},
		{"no approve in the answer", g.deny(d, ReasonInvalidAnswer), false},
		{"host declined at once", g.refuseAnswer(d, "decline", 3*time.Millisecond), true},
		{"cancelled", g.refuseAnswer(d, "cancel", 5*time.Second), true},
		{"no form support", g.deny(d, ReasonUnsupportedClient), true},
		{"timeout", g.deny(d, ReasonTimeout), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := fault.From(tt.err).Message
			if got := strings.Contains(msg, "governance.models.allow"); got != tt.way {
				t.Errorf("names governance.models.allow = %v, want %v: %q", got, tt.way, msg)
			}
		})
	}
}
