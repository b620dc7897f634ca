package price

import (
	"math/big"
	"sort"
	"strings"

	"github.com/coagent8/coagent8/internal/policy"
)

// Quote returns model's output price as run by backend, recording whether
// the match was exact or approximate. It implements
// [policy.Catalog].
func (c *Catalog) Quote(backend, model string) policy.Quote {
	if c == nil || !validID(model) {
		return policy.Quote{}
	}
	m := strings.ToLower(model)
	author := authorFor(backend, m)
	if e, ok := c.exact[qualify(author, m)]; ok {
		return quoteOf(e, policy.MatchExact)
	}
	if e, ok := c.closest(author, m); ok {
		return quoteOf(e, policy.MatchApprox)
	}
	return policy.Quote{}
}

func quoteOf(e entry, m policy.Match) policy.Quote {
	return policy.Quote{ID: e.id, PerMillion: new(big.Rat).Set(e.perMillion), Match: m}
}

// qualify returns author/model; an id that already names an author is kept.
func qualify(author, model string) string {
	if strings.Contains(model, "/") || author == "" {
		return model
	}
	return author + "/" + model
}

// closest finds an approximate entry: same normalised name and, when known,
// the same author. Several candidates (e.g. an id and a differently priced
// variant) resolve to the highest price, so an approximate match never
// understates.
func (c *Catalog) closest(author, model string) (entry, bool) {
	if a, _, ok := strings.Cut(model, "/"); ok {
		author = a
	}
	var cands []entry
	for _, e := range c.approx[normalise(model)] {
		if author == "" || e.author == author {
			cands = append(cands, e)
		}
	}
	if len(cands) == 0 {
		return entry{}, false
	}
	sort.Slice(cands, func(i, j int) bool {
		if d := cands[i].perMillion.Cmp(cands[j].perMillion); d != 0 {
			return d > 0
		}
		return cands[i].id < cands[j].id
	})
	return cands[0], true
}

// authorFor maps a backend to the OpenRouter author of its models. agy runs
// several providers' models, so its author follows the model family; an
// unknown family has no author and can only match approximately.
func authorFor(backend, model string) string {
	switch backend {
	case "claude":
		return "anthropic"
	case "codex":
		return "openai"
	}
	switch {
	case strings.HasPrefix(model, "gemini"):
		return "google"
	case strings.HasPrefix(model, "claude"):
		return "anthropic"
	case strings.HasPrefix(model, "gpt-"), oSeries(model):
		return "openai"
	}
	return ""
}

// normalise reduces an id to the form approximate matching compares:
// without author, routing variant, dated suffix or "-latest", with dots as
// dashes, lowercased.
func normalise(id string) string {
	s := strings.ToLower(id)
	if _, rest, ok := strings.Cut(s, "/"); ok {
		s = rest
	}
	s = routingRE().ReplaceAllString(s, "")
	s = strings.TrimSuffix(s, "-latest")
	s = dateRE().ReplaceAllString(s, "")
	return strings.ReplaceAll(s, ".", "-")
}
