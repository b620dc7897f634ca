package governor

import (
	"errors"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
	"github.com/coagent8/coagent8/internal/price"
)

// TestWithRemedyNamesACommandThatWorks: the command a consent refusal
// names is one `governance allow` accepts: with --unlisted exactly when
// the price list does not know the model (helper-70: the bare command
// was refused governance.unknown_model for such a model).
func TestWithRemedyNamesACommandThatWorks(t *testing.T) {
	refusal := fault.New(fault.PolicyDenied, "consent.unsupported_client", "needs approval")
	unpriced := price.UnpricedIDs()
	if len(unpriced) == 0 {
		t.Fatal("the embedded snapshot names no unpriced model")
	}
	tests := []struct {
		name string
		d    policy.Decision
		want string
	}{
		{"priced", policy.Decision{Model: "m-1", PriceMatch: policy.MatchExact}, "coagent8 governance allow m-1"},
		{"approximately priced", policy.Decision{Model: "m-1", PriceMatch: policy.MatchApprox}, "coagent8 governance allow m-1"},
		{"unknown", policy.Decision{Model: "m-new", PriceMatch: policy.MatchNone}, "coagent8 governance allow m-new --unlisted"},
		{"unpriced on purpose", policy.Decision{Model: unpriced[0], PriceMatch: policy.MatchNone}, "coagent8 governance allow " + unpriced[0]},
		{"unpriced on purpose, an effort", policy.Decision{Model: unpriced[0] + "-high", PriceMatch: policy.MatchNone}, "coagent8 governance allow " + unpriced[0] + "-high"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fe *fault.Error
			if !errors.As(withRemedy(refusal, tt.d), &fe) {
				t.Fatal("not a fault")
			}
			if got := fe.Details["remedy"]; got != tt.want {
				t.Errorf("remedy %q, want %q", got, tt.want)
			}
		})
	}
}

// TestWithRemedyNotAfterTheUsersNo: the remedy command goes to the
// calling agent. It is added where nobody said no (no form support, a
// time-out, the host's own instant decline), never after the user's own
// decline or approve:false, nor after a retry with a forged, replayed or
// empty answer: there it would name the way to undo the user's answer.
func TestWithRemedyNotAfterTheUsersNo(t *testing.T) {
	d := policy.Decision{Model: "m-1", PriceMatch: policy.MatchExact}
	for _, tt := range []struct {
		name string
		err  *fault.Error
		want bool
	}{
		{"no form support", fault.New(fault.PolicyDenied, "consent.unsupported_client", "x"), true},
		{"timeout", fault.New(fault.PolicyDenied, "consent.timeout", "x"), true},
		{"host declined at once", fault.New(fault.PolicyDenied, "consent.declined", "x").With("answered_by", "host"), true},
		{"user declined", fault.New(fault.PolicyDenied, "consent.declined", "x").With("answered_by", "user"), false},
		{"approve false", fault.New(fault.PolicyDenied, "consent.not_approved", "x"), false},
		{"forged state", fault.New(fault.PolicyDenied, "consent.invalid_state", "x"), false},
		{"no approve", fault.New(fault.PolicyDenied, "consent.invalid_answer", "x"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fe := fault.From(withRemedy(tt.err, d))
			_, got := fe.Details["remedy"]
			if got != tt.want || strings.Contains(fe.Message, "governance allow") != tt.want {
				t.Errorf("remedy %v (want %v): %q", got, tt.want, fe.Message)
			}
		})
	}
	// The remedy and consent's refusal messages read one list
	// (NoWayAround): a person's answer with any of its reasons gets none.
	for _, reason := range NoWayAroundReasons() {
		fe := fault.From(withRemedy(fault.New(fault.PolicyDenied, reason, "x").With("answered_by", "user"), d))
		if _, got := fe.Details["remedy"]; got {
			t.Errorf("%s answered by the user: remedy %q", reason, fe.Message)
		}
	}
}
