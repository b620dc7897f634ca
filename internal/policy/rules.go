package policy

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// Default limits (seed 000 §2, R-027).
var (
	defaultAskAbove   = big.NewRat(20, 1) // USD per million output tokens
	defaultMultiplier = big.NewRat(2, 1)
)

// RulesConfig is the raw governance section: the user's lists and limits.
// A nil limit takes its default (askAbovePrice 20 USD per million output
// tokens, priceMultiplier 2).
type RulesConfig struct {
	Allow, Ask, Deny []string
	AskAbovePrice    *big.Rat // USD per million output tokens, ≥ 0
	PriceMultiplier  *big.Rat // > 0
}

// Rules is a validated governance section. Construct it with [NewRules] or
// [DefaultRules]; the zero value has no limits, so every unlisted model is
// asked (fail closed).
type Rules struct {
	allow, ask, deny []string
	askAbove         *big.Rat
	multiplier       *big.Rat
}

// KeyError reports an invalid governance value and the config key it came
// from, e.g. Key "governance.priceMultiplier".
type KeyError struct {
	Key     string
	Problem string
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Problem }

// NewRules validates c and returns a copy as [Rules]. It fails with a
// *[KeyError] on a negative askAbovePrice, a priceMultiplier ≤ 0, or a list
// entry that is not a valid model id.
func NewRules(c RulesConfig) (Rules, error) {
	r := Rules{askAbove: defaultAskAbove, multiplier: defaultMultiplier}
	if c.AskAbovePrice != nil {
		if c.AskAbovePrice.Sign() < 0 {
			return Rules{}, &KeyError{"governance.askAbovePrice", "must not be negative"}
		}
		r.askAbove = new(big.Rat).Set(c.AskAbovePrice)
	}
	if c.PriceMultiplier != nil {
		if c.PriceMultiplier.Sign() <= 0 {
			return Rules{}, &KeyError{"governance.priceMultiplier", "must be greater than 0"}
		}
		r.multiplier = new(big.Rat).Set(c.PriceMultiplier)
	}
	var err error
	if r.allow, err = validList("allow", c.Allow); err != nil {
		return Rules{}, err
	}
	if r.ask, err = validList("ask", c.Ask); err != nil {
		return Rules{}, err
	}
	if r.deny, err = validList("deny", c.Deny); err != nil {
		return Rules{}, err
	}
	return r, nil
}

// DefaultRules returns empty lists with the default limits.
func DefaultRules() Rules {
	r, _ := NewRules(RulesConfig{})
	return r
}

func validList(name string, ids []string) ([]string, error) {
	for i, id := range ids {
		if !ValidID(id) {
			return nil, &KeyError{fmt.Sprintf("governance.models.%s[%d]", name, i), "not a valid model id"}
		}
	}
	return slices.Clone(ids), nil
}

// AskAbovePrice returns a copy of the askAbovePrice limit (USD per million
// output tokens), or nil for zero Rules.
func (r Rules) AskAbovePrice() *big.Rat { return copyRat(r.askAbove) }

// PriceMultiplier returns a copy of the priceMultiplier limit, or nil for
// zero Rules.
func (r Rules) PriceMultiplier() *big.Rat { return copyRat(r.multiplier) }

// Lists returns copies of the allow, ask and deny lists.
func (r Rules) Lists() (allow, ask, deny []string) {
	return slices.Clone(r.allow), slices.Clone(r.ask), slices.Clone(r.deny)
}

func copyRat(x *big.Rat) *big.Rat {
	if x == nil {
		return nil
	}
	return new(big.Rat).Set(x)
}

// ValidID reports whether id is a plausible model id: no control
// characters, spaces, shell metacharacters or leading dash (AUD-P1-6).
// It matches ^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,127}$, adapter.ValidModel's
// pattern, repeated here so that policy stays free of the adapter
// package's dependencies; a test keeps the two equal. It is checked by hand
// because compiling that bounded repetition in a package variable costs
// every process start (issue 8 performance); ids_test.go checks it against
// the pattern.
func ValidID(id string) bool {
	if id == "" || len(id) > 128 || !alnum(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		if !alnum(id[i]) && strings.IndexByte("._:/[]-", id[i]) < 0 {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
