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

// firstCover returns the first entry of list that covers model.
func firstCover(list []string, model string) (string, bool) {
	for _, rule := range list {
		if covers(rule, model) {
			return rule, true
		}
	}
	return "", false
}
