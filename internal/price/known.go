package price

import (
	"encoding/json"
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
		_, name, _ := strings.Cut(e.id, "/")
		if e.author == "anthropic" {
			name = strings.ReplaceAll(name, ".", "-")
		}
		seen[name] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
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
