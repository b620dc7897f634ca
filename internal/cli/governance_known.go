package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
	"github.com/coagent8/coagent8/internal/price"
)

// ReasonUnknownModel is the reason `governance allow|ask|deny MODEL`
// refuses an id coagent8 does not know: rules match ids exactly (and their
// effort variants), so a typo would be a rule that never applies, and for
// deny a model the user believes is blocked but is not.
const ReasonUnknownModel = "governance.unknown_model"

// ReasonModelSpelling is the reason `governance allow MODEL` refuses an id
// in another spelling than the one a backend CLI runs (the price list's
// "anthropic/claude-sonnet-5.5" for claude-sonnet-5-5): an allow rule
// matches only the exact id (allow is the boundary that lets a model run
// without asking, so it is never widened), and such a rule would never
// apply. deny and ask cover other spellings and take them.
const ReasonModelSpelling = "governance.model_spelling"

// knownModels is what coagent8 knows to be a model id: the price list in
// force and the embedded one (a refreshed list may have dropped an old
// model), the embedded list's deliberately unpriced current models, and
// the ids already in the user's rules (there are no user-defined prices,
// so a rule is the only model the user defines).
type knownModels struct {
	catalogs []*price.Catalog
	ids      []string
}

func (a *app) knownModels() knownModels {
	inForce, _ := price.Load(price.CachePath(a.env.StateDir()))
	k := knownModels{catalogs: []*price.Catalog{inForce, price.Embedded()}, ids: price.UnpricedIDs()}
	if f, _ := a.env.Load(); f.GovernanceErr() == nil {
		allow, ask, deny := f.Governance.Lists()
		k.ids = slices.Concat(k.ids, allow, ask, deny)
	}
	return k
}

// knows reports whether id, or id without its effort suffix, is known.
func (k knownModels) knows(id string) bool {
	ids := []string{id}
	if base, ok := policy.StripEffort(id); ok {
		ids = append(ids, base)
	}
	for _, id := range ids {
		for _, c := range k.catalogs {
			if c.Knows(id) {
				return true
			}
		}
		if slices.ContainsFunc(k.ids, func(s string) bool { return strings.EqualFold(s, id) }) {
			return true
		}
	}
	return false
}

// runID returns the id a backend CLI runs for id ([price.Catalog.RunID]),
// as the first catalog that knows the model spells it, else stripped of
// what no CLI runs. The unpriced ids are in that form already.
func (k knownModels) runID(id string) string {
	run := id
	for i, c := range k.catalogs {
		r, known := c.RunID(id)
		if known {
			return r
		}
		if i == 0 {
			run = r
		}
	}
	return run
}

// closest returns the known id nearest to id in edit distance, or "" when
// none is near enough to be a misspelling of it. An id whose digits
// differ names another version, not a misspelling: claude-opus-4-0 was
// offered claude-opus-4-1, another model at another price (red team).
func (k knownModels) closest(id string) string {
	names := slices.Clone(k.ids)
	for _, c := range k.catalogs {
		names = append(names, c.Names()...)
	}
	slices.Sort(names) // ties go to the first in order, whatever the sources' order
	best, bestD := "", min(3, len(id)/3)+1
	for _, n := range names {
		if digits(n) != digits(id) {
			continue
		}
		if d := levenshtein.ComputeDistance(strings.ToLower(id), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// digits returns the decimal digits of s, in order: a model's version
// and date.
func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// unknownModel is the INVALID_INPUT refusal of id, with the nearest known
// id when there is one (detail "suggestion").
func unknownModel(id string, k knownModels) *fault.Error {
	msg := fmt.Sprintf("unknown model %q", id)
	s := k.closest(id)
	if s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	fe := fault.New(fault.InvalidInput, ReasonUnknownModel, msg+
		": coagent8 knows the models of its price list (`coagent8 prices show`, unpriced ones included) and those already in your rules, "+
		"and nothing was written; for a model newer than that list, as a refusal names it, add --unlisted").With("model", id)
	if s != "" {
		fe = fe.With("suggestion", s)
	}
	return fe
}

// misspeltAllow is the INVALID_INPUT refusal of an allow rule for model,
// which a backend CLI runs as run (details "model" and "suggestion"). The
// command it names keeps --unlisted when it was given.
func misspeltAllow(model, run string, unlisted bool) *fault.Error {
	cmd := "coagent8 governance allow " + run
	if unlisted {
		cmd += " --unlisted"
	}
	return fault.New(fault.InvalidInput, ReasonModelSpelling, fmt.Sprintf(
		"%q is not the id a backend runs (did you mean %q?): an allow rule matches only the exact id the backend CLI runs, "+
			"not a price list's spelling, so it would never apply; nothing was written. Run `%s`", model, run, cmd)).
		With("model", model).With("suggestion", run)
}
