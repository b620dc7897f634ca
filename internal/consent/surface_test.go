package consent

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/policy"
)

// TestSurfaces: the terminal's Refusal refuses an ask decision as Check
// does for a call that cannot elicit (code, reason, one event) but in
// words for the terminal, not "this MCP client" (issue 18 item 4); the zero values refuse too, and an Elicitation
// without a tool call cannot approve.
func TestSurfaces(t *testing.T) {
	d := askDecision(true)
	tests := []struct {
		name     string
		ask      func(g *Gate) governor.Consent
		events   int
		terminal bool
	}{
		{"terminal refusal", func(g *Gate) governor.Consent { return g.Refusal() }, 1, true},
		{"elicitation without a call", func(g *Gate) governor.Consent { return g.Elicitation(nil) }, 1, false},
		{"zero refusal", func(*Gate) governor.Consent { return Refusal{} }, 0, true},
		{"zero elicitation", func(*Gate) governor.Consent { return &Elicitation{} }, 0, false},
	}
	terminal := "model " + d.Model + " needs the user's approval, and a terminal command cannot ask for it " +
		"(only an MCP host that shows approval forms can)"
	ref, err := New(Options{Sink: &event.Memory{}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, wantErr := ref.Check(context.Background(), nil, d)
	want := fault.From(wantErr)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &event.Memory{}
			g, err := New(Options{Sink: sink})
			if err != nil {
				t.Fatal(err)
			}
			ans, err := tt.ask(g).Ask(context.Background(), d)
			fe := fault.From(err)
			got := []any{ans, fe.Code, fe.Reason, fe.Message, fe.Details, len(sink.Events())}
			w := []any{governor.Answer{}, want.Code, want.Reason, want.Message, fe.Details, tt.events}
			if tt.terminal { // the terminal's words, the same details
				w[3], w[4] = terminal, want.Details
			}
			if d := cmp.Diff(w, got); d != "" {
				t.Errorf("Ask (-want +got):\n%s", d)
			}
			if fe.Code != fault.PolicyDenied || fe.Reason != ReasonUnsupportedClient {
				t.Errorf("refusal = %s %s, want POLICY_DENIED %s", fe.Code, fe.Reason, ReasonUnsupportedClient)
			}
		})
	}
	// Allow and deny never reach a Consent (the governor decides them),
	// but an Elicitation given one still follows Check.
	if _, err := ref.Elicitation(nil).Ask(context.Background(), policy.Decision{Effect: policy.Allow, Model: "m"}); err != nil {
		t.Errorf("allow through Elicitation: %v", err)
	}
}
