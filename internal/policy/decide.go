package policy

import (
	"fmt"
	"math/big"
)

// Reasons. Each branch of [Decide] sets exactly one; they are stable
// machine-readable values that reach POLICY_DENIED errors and events.
const (
	ReasonInvalidModel    = "model.invalid"            // id fails [ValidID]
	ReasonUnresolved      = "consent.model_unresolved" // no model named and no default known
	ReasonDenyRule        = "governance.deny"          // on governance.models.deny
	ReasonAskRule         = "governance.ask"           // on governance.models.ask
	ReasonAllowRule       = "governance.allow"         // on governance.models.allow
	ReasonNoPriceData     = "price.no_data"            // no catalog at all
	ReasonUnpriced        = "price.unknown"            // catalog has no entry
	ReasonApproximate     = "price.approximate"        // only an approximate entry
	ReasonAboveLimit      = "price.above_limit"        // price ≥ askAbovePrice
	ReasonDefaultUnpriced = "price.default_unpriced"   // default's price unknown: multiplier unmet
	ReasonAboveMultiplier = "price.above_multiplier"   // price ≥ multiplier × default's
	ReasonBelowLimits     = "price.below_limits"       // exact price below both limits
)

// Quote is a catalog's answer for one model id.
type Quote struct {
	// ID is the catalog id that matched, e.g. "anthropic/claude-sonnet-4.5".
	ID string
	// PerMillion is the output price in USD per million tokens; nil when
	// Match is MatchNone.
	PerMillion *big.Rat
	// Match says how the id was found.
	Match Match
}

// Catalog is the price source [Decide] consults. internal/price implements
// it; a nil Catalog or one with Len() == 0 means "no price data".
type Catalog interface {
	// Len returns the number of priced entries.
	Len() int
	// Quote returns the output price of model as run by backend ("claude",
	// "codex", "agy"), or a Quote with Match == MatchNone.
	Quote(backend, model string) Quote
}

// Input is what a turn asks for.
type Input struct {
	Backend   string // "claude", "codex" or "agy"
	Requested string // the caller's model id; "" = the backend's default
	Default   string // the backend's default model from a metadata probe; "" = unknown
	Effort    string // native effort parameter (shown to the user; does not change the id)
}

// Decision is the result of [Decide]. Every field is a copy.
type Decision struct {
	Effect Effect
	// Rule names the config key that decided, e.g.
	// `governance.models.deny["gpt-5"]` or "governance.askAbovePrice";
	// empty when no user rule or limit applied.
	Rule string
	// Reason is one of the Reason constants.
	Reason string
	// Backend and Model name the concrete model the backend will run; Model
	// is the default's id when the caller named none.
	Backend, Model string
	// IsDefault reports whether Model is the backend's default model.
	IsDefault bool
	Effort    string
	// Price is Model's output price in USD per million tokens, nil if unknown.
	Price      *big.Rat
	PriceMatch Match
	PriceID    string
	// Remember reports whether an approval may be remembered: only for the
	// unpriced or approximately priced class.
	Remember bool
	// AskAbove and Multiplier are the limits in force (for messages).
	AskAbove, Multiplier *big.Rat
}

// Decide applies the rules of seed 000 §2 in order: model resolution,
// deny > ask > allow, then price rules. It does no I/O and never fails:
// problems are Deny or Ask decisions with a specific Reason.
func Decide(r Rules, cat Catalog, in Input) Decision {
	d := Decision{Backend: in.Backend, Effort: in.Effort, AskAbove: r.AskAbovePrice(), Multiplier: r.PriceMultiplier()}
	d.Model, d.IsDefault = in.Requested, in.Requested == "" || sameID(in.Requested, in.Default)
	if d.Model == "" {
		d.Model = in.Default
	}
	switch {
	case d.Model == "":
		return d.with(Deny, "", ReasonUnresolved)
	case !ValidID(d.Model):
		return d.with(Deny, "", ReasonInvalidModel)
	}
	if dd, ok := decideLists(r, d); ok {
		return dd
	}
	return decidePrice(r, cat, in, d)
}

func (d Decision) with(e Effect, rule, reason string) Decision {
	d.Effect, d.Rule, d.Reason = e, rule, reason
	return d
}

// decideLists applies the user's lists, deny before ask before allow
// . It reports false when no list covers the model.
func decideLists(r Rules, d Decision) (Decision, bool) {
	for _, l := range []struct {
		name   string
		ids    []string
		effect Effect
		reason string
		loose  bool // other spellings of the same model are one id (see firstCover)
	}{
		{"deny", r.deny, Deny, ReasonDenyRule, true},
		{"ask", r.ask, Ask, ReasonAskRule, true},
		{"allow", r.allow, Allow, ReasonAllowRule, false},
	} {
		if id, ok := firstCover(l.ids, d.Model, l.loose); ok {
			return d.with(l.effect, fmt.Sprintf("governance.models.%s[%q]", l.name, id), l.reason), true
		}
	}
	return d, false
}
