package policy

import (
	"errors"
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewRulesErrors(t *testing.T) {
	tests := []struct {
		name string
		in   RulesConfig
		key  string
	}{
		{"negative limit", RulesConfig{AskAbovePrice: big.NewRat(-1, 1)}, "governance.askAbovePrice"},
		{"zero multiplier", RulesConfig{PriceMultiplier: new(big.Rat)}, "governance.priceMultiplier"},
		{"negative multiplier", RulesConfig{PriceMultiplier: big.NewRat(-2, 1)}, "governance.priceMultiplier"},
		{"bad allow id", RulesConfig{Allow: []string{"ok", "rm -rf /"}}, "governance.models.allow[1]"},
		{"bad ask id", RulesConfig{Ask: []string{""}}, "governance.models.ask[0]"},
		{"bad deny id", RulesConfig{Deny: []string{"-x"}}, "governance.models.deny[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewRules(tt.in)
			var ke *KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("NewRules(%+v) error = %v, want *KeyError", tt.in, err)
			}
			if ke.Key != tt.key {
				t.Errorf("key = %q, want %q", ke.Key, tt.key)
			}
		})
	}
}

func TestNewRulesCopies(t *testing.T) {
	allow := []string{"a"}
	limit := big.NewRat(30, 1)
	r, err := NewRules(RulesConfig{Allow: allow, AskAbovePrice: limit})
	if err != nil {
		t.Fatal(err)
	}
	allow[0] = "changed"
	limit.SetInt64(1)
	gotAllow, _, _ := r.Lists()
	if diff := cmp.Diff([]string{"a"}, gotAllow); diff != "" {
		t.Errorf("Lists() changed with the caller's slice (-want +got):\n%s", diff)
	}
	if r.AskAbovePrice().Cmp(big.NewRat(30, 1)) != 0 {
		t.Errorf("AskAbovePrice() = %v, want 30", r.AskAbovePrice())
	}
}

func TestStringsPanicOnInvalid(t *testing.T) {
	for _, f := range []func() string{Effect(7).String, Match(9).String} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("String() on an invalid value did not panic")
				}
			}()
			f()
		}()
	}
	if got := Deny.String() + Ask.String() + Allow.String(); got != "denyaskallow" {
		t.Errorf("Effect strings = %q", got)
	}
	var zero Decision
	if zero.Effect != Deny {
		t.Error("zero Decision does not deny")
	}
}
