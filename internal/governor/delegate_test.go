package governor

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/policy"
)

// TestCeiling: a caller's budget takes the defaults and never exceeds the
// user's ceilings; every refusal has its code and reason.
func TestCeiling(t *testing.T) {
	c := config.Delegate{MaxUSD: 2, MaxMinutes: 10}
	for _, tc := range []struct {
		in         job.Budget
		want       job.Budget
		wantReason string
	}{
		{job.Budget{MaxUSD: 1}, job.Budget{MaxUSD: 1, MaxMinutes: 10, MaxRequests: DefaultMaxRequests}, ""},
		{job.Budget{MaxUSD: 2, MaxMinutes: 10, MaxRequests: 5}, job.Budget{MaxUSD: 2, MaxMinutes: 10, MaxRequests: 5}, ""},
		{job.Budget{}, job.Budget{}, ReasonBudgetMissing},
		{job.Budget{MaxUSD: -1}, job.Budget{MaxUSD: -1}, ReasonBudgetInvalid},
		{job.Budget{MaxUSD: 1, MaxRequests: maxJobRequests + 1}, job.Budget{}, config.ReasonBudgetRange},
		{job.Budget{MaxUSD: 1e308}, job.Budget{}, config.ReasonBudgetRange},
		{job.Budget{MaxUSD: math.Inf(1)}, job.Budget{}, config.ReasonBudgetRange},
		{job.Budget{MaxUSD: math.NaN()}, job.Budget{}, ReasonBudgetInvalid},
		{job.Budget{MaxUSD: 1, MaxMinutes: config.MaxBudgetMinutes + 1}, job.Budget{}, config.ReasonBudgetRange},
		{job.Budget{MaxUSD: 2.01}, job.Budget{}, ReasonBudgetCeiling},
		{job.Budget{MaxUSD: 1, MaxMinutes: 11}, job.Budget{}, ReasonBudgetCeiling},
	} {
		got, err := ceiling(tc.in, c)
		reason := ""
		if fe := fault.From(err); fe != nil {
			reason = fe.Reason
		}
		if reason != tc.wantReason {
			t.Errorf("ceiling(%+v) reason %q (%v), want %q", tc.in, reason, err, tc.wantReason)
		}
		if err == nil {
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ceiling(%+v) (-want +got):\n%s", tc.in, d)
			}
		}
	}
}

// TestCeilingNamesField: a negative or NaN budget field is refused
// naming that field and its value (max_usd -1 used to be told "budget
// fields must be positive numbers (max_requests at most 10000)").
func TestCeilingNamesField(t *testing.T) {
	c := config.Delegate{MaxUSD: 2, MaxMinutes: 10}
	for _, tc := range []struct {
		in        job.Budget
		wantField string
		wantMsg   string
	}{
		{job.Budget{MaxUSD: -1}, "budget.max_usd", "budget.max_usd must be a number of US dollars above 0 (got -1)."},
		{job.Budget{MaxUSD: math.NaN()}, "budget.max_usd", "budget.max_usd must be a number of US dollars above 0 (got NaN)."},
		{job.Budget{MaxUSD: 1, MaxRequests: -3}, "budget.max_requests", "budget.max_requests must be a whole number from 0 to 10000 (got -3)."},
		{job.Budget{MaxUSD: 1, MaxMinutes: -4}, "budget.max_minutes", "budget.max_minutes must be a whole number from 0 to 1440 (got -4)."},
	} {
		_, err := ceiling(tc.in, c)
		fe := fault.From(err)
		if fe == nil || fe.Reason != ReasonBudgetInvalid {
			t.Fatalf("ceiling(%+v) = %v, want %s", tc.in, err, ReasonBudgetInvalid)
		}
		if got := fe.Message; got != tc.wantMsg {
			t.Errorf("ceiling(%+v) message %q, want %q", tc.in, got, tc.wantMsg)
		}
		if got := fe.Details["field"]; got != tc.wantField {
			t.Errorf("ceiling(%+v) field %q, want %q", tc.in, got, tc.wantField)
		}
	}
}

// TestDelegateBackend: Claude Code and Codex have a job path; agy is
// UNSUPPORTED naming why, anything else INVALID_INPUT.
func TestDelegateBackend(t *testing.T) {
	for _, tc := range []struct{ in, want, code string }{
		{"", "claude", ""}, {"auto", "claude", ""}, {"Claude", "claude", ""},
		{"codex", "codex", ""}, {"Codex", "codex", ""}, {"agy", "", string(fault.Unsupported)}, {"x", "", string(fault.InvalidInput)},
	} {
		got, err := delegateBackend(tc.in)
		code := ""
		if fe := fault.From(err); fe != nil {
			code = string(fe.Code)
		}
		if got != tc.want || code != tc.code {
			t.Errorf("delegateBackend(%q) = %q, %q; want %q, %q", tc.in, got, code, tc.want, tc.code)
		}
	}
}

// TestValidTask: empty, blank, oversized and NUL-bearing tasks are refused.
func TestValidTask(t *testing.T) {
	big := make([]byte, MaxTaskBytes+1)
	for i := range big {
		big[i] = 'x'
	}
	for _, tc := range []struct{ in, reason string }{
		{"do it", ""}, {"", ReasonTaskEmpty}, {" \t\n", ReasonTaskEmpty}, {string(big), ReasonTaskSize}, {"a\x00b", ReasonTaskEmpty},
	} {
		reason := ""
		if fe := fault.From(validTask(tc.in)); fe != nil {
			reason = fe.Reason
		}
		if reason != tc.reason {
			t.Errorf("validTask(%.20q) reason %q, want %q", tc.in, reason, tc.reason)
		}
	}
}

// TestUnaskedSteps: the terminal refusal names every missing step.
func TestUnaskedSteps(t *testing.T) {
	m := "claude-sonnet-5-5"
	tests := []struct {
		effect policy.Effect
		allow  []string
		want   string
	}{
		{policy.Ask, nil, "run `coagent8 governance allow " + m + "` and add " + m + " to delegate.allowWithoutAsking in the coagent8 configuration"},
		{policy.Ask, []string{m}, "run `coagent8 governance allow " + m + "`"},
		{policy.Allow, nil, "add " + m + " to delegate.allowWithoutAsking in the coagent8 configuration"},
	}
	for _, tt := range tests {
		if got := unaskedSteps(policy.Decision{Effect: tt.effect, Model: m, PriceMatch: policy.MatchApprox}, tt.allow); got != tt.want {
			t.Errorf("unaskedSteps(%v, %v) = %q, want %q", tt.effect, tt.allow, got, tt.want)
		}
	}
	// A model the price list does not know needs --unlisted, or the
	// named command is refused governance.unknown_model.
	d := policy.Decision{Effect: policy.Ask, Model: "m-new"}
	if got, want := unaskedSteps(d, []string{"m-new"}), "run `coagent8 governance allow m-new --unlisted`"; got != want {
		t.Errorf("unaskedSteps(unknown model) = %q, want %q", got, want)
	}
}

// TestCeilingNamesTheExceededCeiling: the refusal names only the ceiling
// the budget is above (both only when both are; a newcomer was told both
// for --max-usd 6 alone).
func TestCeilingNamesTheExceededCeiling(t *testing.T) {
	c := config.Delegate{MaxUSD: 5, MaxMinutes: 30}
	for _, tc := range []struct {
		in   job.Budget
		want string
	}{
		{job.Budget{MaxUSD: 6}, "the budget of 6.00 USD is above your ceiling delegate.maxUSD 5.00 in the coagent8 configuration; ask for less, or raise it there"},
		{job.Budget{MaxUSD: 2, MaxMinutes: 60}, "the budget of 60 minutes is above your ceiling delegate.maxMinutes 30 in the coagent8 configuration; ask for less, or raise it there"},
		{job.Budget{MaxUSD: 6, MaxMinutes: 60}, "the budget of 6.00 USD and 60 minutes is above your ceilings delegate.maxUSD 5.00 and delegate.maxMinutes 30 in the coagent8 configuration; ask for less, or raise them there"},
	} {
		_, err := ceiling(tc.in, c)
		if got := fault.From(err).Error(); !strings.Contains(got, tc.want) {
			t.Errorf("ceiling(%+v) = %q, want it to contain %q", tc.in, got, tc.want)
		}
	}
}
