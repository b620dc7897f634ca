package policy

import "testing"

// exactLists is decideLists as it was before deny and ask covered other
// spellings of their model (only the effort suffix and dot/dash
// versions): the reference FuzzWideningOnlyTightens compares with.
func exactLists(r Rules, d Decision) (Decision, bool) {
	for _, l := range []struct {
		ids    []string
		effect Effect
	}{{r.deny, Deny}, {r.ask, Ask}, {r.allow, Allow}} {
		for _, rule := range l.ids {
			if covers(rule, d.Model) || l.effect != Allow && covers(spelling(rule), spelling(d.Model)) {
				return d.with(l.effect, "", ""), true
			}
		}
	}
	return d, false
}

// FuzzWideningOnlyTightens: the wider deny and ask lists (baseID) never
// make a decision more permissive than the exact lists did, whichever
// list the rule is on and however the catalog prices the model (here
// cheaply, so the price rules would allow); and an allow by rule is an
// exact cover of an allow entry.
func FuzzWideningOnlyTightens(f *testing.F) {
	for _, s := range [][2]string{
		{"gpt-5", "gpt-5-2025-08-07"}, {"claude-opus-4.6", "anthropic/claude-opus-4-6-20260101[1m]"},
		{"gpt-5", "gpt-5-high-2025-08-07"}, {"gpt-5-mini", "gpt-5"}, {"openai/gpt-5", "gpt-5:nitro"},
		{"m", "m-latest-0-1234[x]"}, {"a-0", "A.0"}, {"gpt-5", "gpt-5.0.0"},
	} {
		for list := range uint8(3) {
			f.Add(s[0], s[1], list)
		}
	}
	f.Fuzz(func(t *testing.T, rule, model string, list uint8) {
		if !ValidID(rule) || !ValidID(model) {
			return // not an input Decide takes: nothing to compare
		}
		var c RulesConfig
		switch list % 3 {
		case 0:
			c.Deny = []string{rule}
		case 1:
			c.Ask = []string{rule}
		default:
			c.Allow = []string{rule}
		}
		r, err := NewRules(c)
		if err != nil {
			return // not an input Decide takes: nothing to compare
		}
		cat := catalog("def=10", model+"=1")
		in := Input{Backend: "claude", Requested: model, Default: "def"}
		got := Decide(r, cat, in)
		d := Decision{Backend: in.Backend, AskAbove: r.AskAbovePrice(), Multiplier: r.PriceMultiplier(),
			Model: model, IsDefault: sameID(model, in.Default)}
		want, ok := exactLists(r, d)
		if !ok {
			want = decidePrice(r, cat, in, d)
		}
		if got.Effect > want.Effect {
			t.Errorf("rule %q on list %d, model %q: %s (%s), the exact lists gave %s", rule, list%3, model, got.Effect, got.Reason, want.Effect)
		}
		if got.Reason == ReasonAllowRule && !covers(rule, model) {
			t.Errorf("allow %q allowed %q, which it does not cover exactly", rule, model)
		}
	})
}
