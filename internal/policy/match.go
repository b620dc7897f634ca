package policy

import (
	"regexp"
	"strings"
)

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
// list (deny, ask) also covers model when the two name the same model in
// another spelling, still as whole ids: a version spelt with dots or
// dashes (a deny rule written "claude-opus-4.7", as the catalogs spell
// it, must not miss the "claude-opus-4-7" Claude Code runs; newcomer
// report), a provider or router prefix ("openai/gpt-5"), a router
// variant (":nitro"), a dated snapshot ("-2025-08-07", "-20250929"),
// "-latest", or a ".0" minor version (red team: deny
// "gpt-5" answered ask for gpt-5-2025-08-07). The allow list stays
// exact, so the widening only ever asks or refuses more.
func firstCover(list []string, model string, loose bool) (string, bool) {
	for _, rule := range list {
		if covers(rule, model) || loose && sameModel(rule, model) {
			return rule, true
		}
	}
	return "", false
}

// sameModel reports whether a and b name the same model once both are
// reduced to their base id ([baseID]).
func sameModel(a, b string) bool {
	x, y := baseID(a), baseID(b)
	return x != "" && x == y
}

// Snapshot and alias suffixes of a base id: a date as the providers
// append it (OpenAI -YYYY-MM-DD and the older -MMDD, Anthropic
// -YYYYMMDD), "-latest", a trailing ".0"/"-0" minor version, and a
// bracketed variant (Claude Code's context window, "[1m]").
var (
	dateSuffix    = regexp.MustCompile(`(?:-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{4})$`)
	aliasSuffix   = regexp.MustCompile(`-latest$`)
	zeroVersion   = regexp.MustCompile(`-0$`)
	bracketSuffix = regexp.MustCompile(`\[[^\[\]]*\]$`)
)

// baseID is id in lower case without a provider or router prefix (up to
// the last "/"), a ":variant", and any sequence of a bracketed variant,
// a reasoning-effort suffix, a dated snapshot, "-latest" and a ".0" minor
// version, with its dots as dashes: "openai/GPT-5.0-2025-08-07:nitro" →
// "gpt-5", "claude-opus-4-6-20260101[1m]" → "claude-opus-4-6". The
// suffixes are stripped until none is left, in whatever order they came:
// stripped once each in a fixed order, "claude-opus-4-6[1m]" and
// "gpt-5-high-2025-08-07" kept their suffix and escaped a deny rule of
// their model (answered a rememberable ask, or allowed by price under an
// ask rule). Stripping more only makes deny and ask cover more.
func baseID(id string) string {
	id = strings.ToLower(id)
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	if i := strings.IndexByte(id, ':'); i >= 0 {
		id = id[:i]
	}
	id = spelling(id)
	for {
		prev := id
		id = bracketSuffix.ReplaceAllString(id, "")
		if base, ok := stripEffort(id); ok {
			id = base
		}
		for _, re := range []*regexp.Regexp{dateSuffix, aliasSuffix, zeroVersion} {
			id = re.ReplaceAllString(id, "")
		}
		if id == prev {
			return id
		}
	}
}

// StripEffort returns id without a trailing reasoning-effort suffix
// ("-high", ":xhigh", ...) and whether it had one: the id a rule for id
// also covers, for callers outside policy that must treat an effort
// variant as its model (`governance allow` checking the id is known).
func StripEffort(id string) (string, bool) { return stripEffort(id) }
