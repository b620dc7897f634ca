package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestGrantCoversOneRequest: a spend budget below the reservation of one
// request naming no output limit is refused at grant time, naming the
// minimum (issue 19 item 14); exactly the minimum is granted.
func TestGrantCoversOneRequest(t *testing.T) {
	f := newFixture(t, nil)
	s := spec(Anthropic) // $15 per million output tokens
	s.OutputCeiling = 128000
	s.MaxSpend = USD(1)
	_, _, err := f.gate.Grant(context.Background(), s)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.InvalidInput || fe.Reason != ReasonBelowReservation || fe.Details["minimum_usd"] != "1.92" {
		t.Fatalf("Grant = %v (%+v), want INVALID_INPUT %s with minimum_usd 1.92", err, fe, ReasonBelowReservation)
	}
	s.MaxSpend = USD(1.92)
	if _, _, err := f.gate.Grant(context.Background(), s); err != nil {
		t.Errorf("Grant at the minimum: %v", err)
	}
}

// TestGrantCoversOneRequestTokens: a token budget below the output
// ceiling — what a request naming no output limit reserves in tokens — is
// refused at grant time, naming the minimum and the flags to change, as
// the spend budget is: `--max-tokens 100000` with the default ceiling of
// 128,000 was granted and then refused every such request 402
// budget.request_tokens. A budget of exactly the ceiling is granted.
func TestGrantCoversOneRequestTokens(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		name            string
		tokens, ceiling int64
		wantMin         string // "" = granted
	}{
		{"default ceiling", 100_000, 0, "128000"},
		{"one below the ceiling", 31_999, 32_000, "32000"},
		{"at the ceiling", 32_000, 32_000, ""},
		{"small ceiling", 10, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spec(Anthropic)
			s.MaxTokens, s.OutputCeiling = tt.tokens, tt.ceiling
			_, _, err := f.gate.Grant(context.Background(), s)
			var fe *fault.Error
			var got []string
			if errors.As(err, &fe) {
				got = []string{string(fe.Code), fe.Reason, fe.Details["minimum_tokens"],
					fmt.Sprint(strings.Contains(fe.Message, "--max-tokens"), strings.Contains(fe.Message, "--output-ceiling"))}
			} else if err != nil {
				t.Fatalf("Grant = %v, want a *fault.Error", err)
			}
			var want []string
			if tt.wantMin != "" {
				want = []string{string(fault.InvalidInput), ReasonBelowReservation, tt.wantMin, "true true"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Grant refusal (-want +got)\n%s", diff)
			}
		})
	}
}

// TestBudgetRefusalBodies: a final budget refusal is 402 billing_error
// with x-should-retry false and a message naming the amounts; a refusal
// that passes once requests in flight settle stays a retryable 429.
func TestBudgetRefusalBodies(t *testing.T) {
	f := newFixture(t, nil)
	s := spec(Anthropic)
	s.MaxRequests = 1
	gr, phantom := f.grant(s)
	readAll(t, f.call(Anthropic, phantom, gr.Model, true))
	poor := spec(Anthropic)
	poor.MaxSpend, poor.OutputCeiling = USD(0.00002), 1
	_, poorPhantom := f.grant(poor)

	tests := []struct {
		name, phantom, reason, retry, errType, message string
		status                                         int
	}{
		{"requests used up", phantom, ReasonBudgetRequests, "false", "billing_error",
			"coagent8 gate refused the request: budget.requests: the grant's budget is used up", 402},
		{"request above the whole grant", poorPhantom, ReasonRequestSpend, "false", "billing_error",
			"coagent8 gate refused the request: budget.request_spend: this request reserves $", 402},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.call(Anthropic, tt.phantom, gr.Model, true)
			var body struct {
				Type  string
				Error struct{ Type, Code, Message string }
			}
			raw := readAll(t, resp)
			if err := json.Unmarshal([]byte(raw), &body); err != nil {
				t.Fatalf("body %q: %v", raw, err)
			}
			got := []string{resp.Header.Get("X-Coagent8-Gate-Reason"), resp.Header.Get("X-Should-Retry"), body.Type, body.Error.Type, body.Error.Code}
			want := []string{tt.reason, tt.retry, "error", tt.errType, tt.reason}
			if diff := cmp.Diff(want, got); diff != "" || resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d; (-want +got)\n%s", resp.StatusCode, tt.status, diff)
			}
			if len(body.Error.Message) < len(tt.message) || body.Error.Message[:len(tt.message)] != tt.message {
				t.Errorf("message %q, want prefix %q", body.Error.Message, tt.message)
			}
		})
	}
	if got := status(ReasonBudgetReserved); got != 429 {
		t.Errorf("status(%s) = %d, want 429 (passes once reservations settle)", ReasonBudgetReserved, got)
	}
}

// TestInspectLastRefusal: Inspect names the reason of the latest request
// the gate refused for the grant ("" before any), so a delegate job can
// say its budget, not its agent, ended it; another grant's refusal is not
// reported for it.
func TestInspectLastRefusal(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	poor := spec(Anthropic)
	poor.MaxSpend, poor.OutputCeiling = USD(0.00002), 1
	gr, phantom := f.grant(poor)
	other, _ := f.grant(spec(Anthropic))
	lastOf := func(id string) string {
		g, err := f.gate.Inspect(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return g.LastRefusal
	}
	before := lastOf(gr.ID)
	readAll(t, f.call(Anthropic, phantom, gr.Model, true))
	got := []string{before, lastOf(gr.ID), lastOf(other.ID)}
	want := []string{"", ReasonRequestSpend, ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LastRefusal before, after, of the other grant (-want +got)\n%s", diff)
	}
}
