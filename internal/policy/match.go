package policy

import "strings"

// efforts are the reasoning-effort suffixes an id may carry
// (governance-and-consent.md §5).
var efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// sameID reports whether two model ids are the same id. Ids compare
// case-insensitively: providers treat them so, and a case trick must not
// slip past a deny rule.
func sameID(a, b string) bool { return strings.EqualFold(a, b) }

// stripEffort returns id without a trailing "-<effort>" or ":<effort>"
// suffix, and whether there was one.
func stripEffort(id string) (string, bool) {
	for _, e := range efforts {
		for _, sep := range []string{"-", ":"} {
			suf := sep + e
			if len(id) > len(suf) && strings.EqualFold(id[len(id)-len(suf):], suf) {
				return id[:len(id)-len(suf)], true
			}
		}
	}
	return "", false
}

// covers reports whether a rule naming rule applies to model: the whole id,
// or the id plus an effort suffix. "gpt-5.2" does not cover
// "gpt-5.2-codex".
func covers(rule, model string) bool {
	if sameID(rule, model) {
		return true
	}
	base, ok := stripEffort(model)
	return ok && sameID(rule, base)
}

// spelling is id with its version dots written as dashes: the one id
// the providers spell both ways (Anthropic's API runs claude-opus-4-7,
// catalogs list claude-opus-4.7; governance-and-consent.md §4).
func spelling(id string) string { return strings.ReplaceAll(id, ".", "-") }

// firstCover returns the first entry of list that covers model. A loose
// list (deny, ask) also covers model when the two differ only in how
// their version is spelt, dot or dash, still as whole ids: a deny rule
// written "claude-opus-4.7", as the catalogs spell it, must not miss the
// "claude-opus-4-7" Claude Code runs (newcomer report). The allow list
// stays exact, so the widening only ever asks or refuses more.
func firstCover(list []string, model string, loose bool) (string, bool) {
	for _, rule := range list {
		if covers(rule, model) || loose && covers(spelling(rule), spelling(model)) {
			return rule, true
		}
	}
	return "", false
}

// StripEffort returns id without a trailing reasoning-effort suffix
// ("-high", ":xhigh", ...) and whether it had one: the id a rule for id
// also covers, for callers outside policy that must treat an effort
// variant as its model (`governance allow` checking the id is known).
func StripEffort(id string) (string, bool) { return stripEffort(id) }
