package consent

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/policy"
)

// TestAnswerBound: a bound state answers only its own question (key and
// binding), once, before it expires, with an answer under its key; a
// consult state is not a bound one, nor the reverse.
func TestAnswerBound(t *testing.T) {
	var now time.Time
	g, err := New(Options{Sink: &event.Memory{}, Timeout: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := New(Options{Sink: &event.Memory{}})
	ok := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
	retried := func(state string, key string) *mcp.CallToolRequest {
		return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{RequestState: state, InputResponses: mcp.InputResponseMap{key: ok}}}
	}
	fresh := func() string { now = time.Now(); return g.AskBound("k", "bind", &mcp.ElicitParams{}).RequestState }
	consult := g.inputRequest(policy.Decision{Backend: "claude", Model: "m"}, "").RequestState
	spent := fresh()
	if _, reason := g.AnswerBound(retried(spent, "k"), "k", "bind"); reason != "" {
		t.Fatalf("first answer refused %s", reason)
	}
	for _, tc := range []struct {
		name    string
		state   func() string
		key     string // the response's key
		ask     string // the key AnswerBound is asked for
		binding string
		advance time.Duration
		want    string
	}{
		{"valid", fresh, "k", "k", "bind", 0, ""},
		{"replayed", func() string { return spent }, "k", "k", "bind", 0, ReasonInvalidState},
		{"other binding", fresh, "k", "k", "bind2", 0, ReasonInvalidState},
		{"other question", fresh, "j", "j", "bind", 0, ReasonInvalidState},
		{"answer under another key", fresh, "coagent8.consent", "k", "bind", 0, ReasonInvalidAnswer},
		{"expired", fresh, "k", "k", "bind", 2 * time.Minute, ReasonTimeout},
		{"consult's state", func() string { return consult }, "k", "k", "bind", 0, ReasonInvalidState},
		{"another process's key", func() string { return other.AskBound("k", "bind", &mcp.ElicitParams{}).RequestState }, "k", "k", "bind", 0, ReasonInvalidState},
		{"forged", func() string { return "e30.AAAA" }, "k", "k", "bind", 0, ReasonInvalidState},
		{"none", func() string { return "" }, "k", "k", "bind", 0, ReasonInvalidState},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := tc.state()
			now = now.Add(tc.advance)
			res, got := g.AnswerBound(retried(state, tc.key), tc.ask, tc.binding)
			if got != tc.want || (got == "") != (res == ok) {
				t.Errorf("AnswerBound = %v, %q; want %q", res, got, tc.want)
			}
		})
	}
	// A bound state never passes consult's check.
	if _, reason := g.redeem(fresh(), "", policy.Decision{Backend: "", Model: ""}); reason != ReasonInvalidState {
		t.Errorf("consult redeemed a bound state: %q", reason)
	}
}

// TestReplayInTheLastSecond: a spent state stays spent for as long as it
// could still be redeemed. Expiry is checked in whole seconds (a state
// expiring at second E is valid up to E+0.999…); forgetting spent nonces
// with a finer clock dropped the nonce at E+0.001 while the state still
// passed, so a replay in that last second was accepted as a new answer.
// Both flows: consult's state and a bound question's.
func TestReplayInTheLastSecond(t *testing.T) {
	var now time.Time
	g, err := New(Options{Sink: &event.Memory{}, Timeout: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ok := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
	d := policy.Decision{Backend: "claude", Model: "m"}
	for _, tc := range []struct {
		name   string
		ask    func() string
		redeem func(state string) string
	}{
		{"bound", func() string { return g.AskBound("k", "bind", &mcp.ElicitParams{}).RequestState }, func(state string) string {
			_, reason := g.AnswerBound(&mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{RequestState: state,
				InputResponses: mcp.InputResponseMap{"k": ok}}}, "k", "bind")
			return reason
		}},
		{"consult", func() string { return g.inputRequest(d, "bind").RequestState }, func(state string) string {
			_, reason := g.redeem(state, "bind", d)
			return reason
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now = time.Unix(1_800_000_000, 250e6)
			state := tc.ask()
			if got := tc.redeem(state); got != "" {
				t.Fatalf("first answer refused: %s", got)
			}
			for _, at := range []time.Duration{30 * time.Second, time.Minute - 1, time.Minute + 1, time.Minute + 700*time.Millisecond} {
				now = time.Unix(1_800_000_000, 0).Add(at)
				if got := tc.redeem(state); got == "" {
					t.Errorf("replay at +%v accepted", at)
				}
			}
		})
	}
}
