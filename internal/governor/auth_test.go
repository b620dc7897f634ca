package governor

import (
	"errors"
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
