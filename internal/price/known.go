package price

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/coagent8/coagent8/internal/policy"
)

// Knows reports whether c prices id, exactly or approximately, as run by
// any backend: the test `coagent8 governance allow|ask|deny` applies
// before writing a rule, so a misspelt id does not become a rule that
// never matches. A nil catalog knows nothing.
func (c *Catalog) Knows(id string) bool {
	return c.Quote("", id).Match != policy.MatchNone
}

// Names returns the ids c prices, sorted and without duplicates, in the
// form a backend CLI names them: without the OpenRouter author and, for
// Anthropic's models, with dashes for dots (Claude Code runs
// claude-sonnet-4-5, OpenRouter lists anthropic/claude-sonnet-4.5). They
// are the suggestions for a misspelt id.
func (c *Catalog) Names() []string {
	if c == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, e := range c.exact {
		seen[e.runName()] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// runName is e's id in the form a backend CLI names it (see [Catalog.Names]).
func (e entry) runName() string {
	_, name, _ := strings.Cut(e.id, "/")
	name = withoutVariants(name)
	if e.author == "anthropic" {
		name = strings.ReplaceAll(name, ".", "-")
	}
	return name
}

// RunID returns the id a backend CLI runs for the model id names, and
// whether c knows that model. An allow rule matches only that exact id
// (policy keeps allow exact), so `coagent8 governance allow` refuses any
// other spelling, such as the one `coagent8 prices show` lists.
//
// The run id is id without an author or router prefix (up to the last
// "/") and an OpenRouter variant (":nitro", ":thinking", ":free"; an
// effort ":high" is kept), which no CLI runs,
// and, for a Claude model, with dashes for dots (Anthropic's ids have no
// dots). When c knows the model, its version is spelt as [Catalog.Names]
// spells it ("gpt-6-1-sol" → "gpt-6.1-sol"), keeping a dated, "-latest"
// or reasoning-effort suffix as given. Otherwise, or when c lists the
// model in several spellings none of which is id's, that is all. Case is
// kept: ids compare ignoring case. A nil catalog knows nothing.
func (c *Catalog) RunID(id string) (run string, known bool) {
	name := cliSpelling(id)
	if c == nil {
		return name, false
	}
	if run, ok := c.spell(name); ok {
		return run, true
	}
	if base, ok := policy.StripEffort(name); ok {
		if run, ok := c.spell(base); ok {
			return run + name[len(base):], true
		}
	}
	return name, false
}

// cliSpelling is id without what no CLI runs: an author or router prefix
// and a listing or routing variant; a Claude id's dots are dashes.
func cliSpelling(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	id = withoutVariants(id)
	if authorFor("", strings.ToLower(id)) == "anthropic" {
		id = strings.ReplaceAll(id, ".", "-")
	}
	return id
}

// withoutVariants is id without its ":variant" suffixes but a reasoning
// effort (":high"), which a rule names: OpenRouter lists a model also
// under variants no CLI runs, the routing ones (":nitro") and others
// (":thinking", ":free", ":extended", ":beta"), and a refreshed price list
// carries them. Kept, `prices show` named claude-3-7-sonnet:thinking the
// id a CLI runs and `governance allow` took it: a rule that never applies.
func withoutVariants(id string) string {
	base, rest, ok := strings.Cut(id, ":")
	if !ok {
		return id
	}
	for _, v := range strings.Split(rest, ":") {
		if b, effort := policy.StripEffort("x:" + v); effort && b == "x" {
			base += ":" + v
		}
	}
	return base
}

// spell returns name with its stem (name without a dated or "-latest"
// suffix) spelt as c's Names spell that model, and whether c has it.
// Several spellings of the model, none of them name's, leave name as it
// is: there is no one id to name.
func (c *Catalog) spell(name string) (string, bool) {
	stem, suffix := splitSnapshot(name)
	var spellings []string
	for _, n := range c.Names() {
		if normalise(n) != normalise(stem) {
			continue
		}
		s, _ := splitSnapshot(n)
		if strings.EqualFold(s, stem) {
			return name, true
		}
		if !slices.ContainsFunc(spellings, func(x string) bool { return strings.EqualFold(x, s) }) {
			spellings = append(spellings, s)
		}
	}
	if len(spellings) == 1 {
		return spellings[0] + suffix, true
	}
	return name, len(spellings) > 0
}

// splitSnapshot splits name into its stem and a trailing dated snapshot
// or "-latest" suffix ("" when there is none).
func splitSnapshot(name string) (stem, suffix string) {
	if loc := dateRE().FindStringIndex(name); loc != nil {
		return name[:loc[0]], name[loc[0]:]
	}
	if len(name) > len("-latest") && strings.EqualFold(name[len(name)-len("-latest"):], "-latest") {
		return name[:len(name)-len("-latest")], name[len(name)-len("-latest"):]
	}
	return name, ""
}

// UnpricedIDs returns the current CLI models the embedded snapshot
// deliberately has no price for (its _coagent8.unpricedIds, the ids its
// Unpriced note names): they are real models, asked for until the user
// allows them, so a rule for one must be accepted.
func UnpricedIDs() []string {
	var meta struct {
		M struct {
			IDs []string `json:"unpricedIds"`
		} `json:"_coagent8"`
	}
	if json.Unmarshal(snapshot, &meta) != nil {
		return nil
	}
	return meta.M.IDs
}
