package price

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/policy"
)

// Kind says where a catalog came from.
type Kind string

// Catalog kinds.
const (
	KindEmbedded Kind = "embedded" // the snapshot compiled into the binary
	KindCache    Kind = "cache"    // the file written by `coagent8 prices refresh`
	KindLive     Kind = "live"     // just fetched
)

// Source describes a catalog's origin for doctor and the consent message.
type Source struct {
	Kind Kind      `json:"kind"`
	URL  string    `json:"url,omitempty"`
	Date time.Time `json:"date"` // fetch time, or the snapshot's compile date
	Note string    `json:"note,omitempty"`
	// Unpriced names the current CLI models the embedded snapshot
	// deliberately has no price for, in words (its _coagent8.unpriced);
	// "" for a fetched list. The Note points at it (issue 18 item 3).
	Unpriced string `json:"unpriced,omitempty"`
}

// Catalog is an immutable set of output prices. It is safe for concurrent
// use and implements [policy.Catalog].
type Catalog struct {
	src    Source
	exact  map[string]entry   // lowercased id or canonical slug
	approx map[string][]entry // normalised name without author
	raw    []byte             // the document as received, for the cache
}

var _ policy.Catalog = (*Catalog)(nil)

type entry struct {
	id, author string
	perMillion *big.Rat
}

// document is the subset of OpenRouter's model list coagent8 reads.
type document struct {
	Meta *struct {
		Compiled string `json:"compiled"`
		Source   string `json:"source"`
		Note     string `json:"note"`
	} `json:"_coagent8"`
	Data []struct {
		ID            string `json:"id"`
		CanonicalSlug string `json:"canonical_slug"`
		Pricing       struct {
			Completion json.RawMessage `json:"completion"`
		} `json:"pricing"`
	} `json:"data"`
}

// ErrNoPrices reports a well-formed list without a single usable price.
var ErrNoPrices = errors.New("price list has no priced models")

// ErrNoData reports a JSON document without OpenRouter's "data" array
// (another API's answer, or an error document).
var ErrNoData = errors.New(`price list has no "data" array`)

// Parse reads an OpenRouter model list. Entries with an unusable price or id
// are skipped; a document that is not JSON, has no "data" array or no
// usable entry is an error, so a broken download never replaces a good
// catalog.
func Parse(raw []byte, src Source) (*Catalog, error) {
	var doc document
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse price list: %w", err)
	}
	if doc.Data == nil {
		return nil, fmt.Errorf("parse price list: %w", ErrNoData)
	}
	c := &Catalog{src: src, exact: map[string]entry{}, approx: map[string][]entry{}, raw: raw}
	for _, m := range doc.Data {
		p, ok := perMillion(m.Pricing.Completion)
		author, _, found := strings.Cut(strings.ToLower(m.ID), "/")
		if !ok || !found || !validID(m.ID) {
			continue
		}
		c.add(entry{id: m.ID, author: author, perMillion: p}, m.CanonicalSlug)
	}
	if len(c.exact) == 0 {
		return nil, ErrNoPrices
	}
	return c, nil
}

func (c *Catalog) add(e entry, canonical string) {
	for _, key := range []string{e.id, canonical} {
		if key == "" || !validID(key) {
			continue
		}
		c.exact[strings.ToLower(key)] = e
		n := normalise(key)
		c.approx[n] = append(c.approx[n], e)
	}
}

var million = big.NewRat(1_000_000, 1)

// perMillion converts a pricing.completion JSON string (USD per token) to
// USD per million tokens. Numbers, "-1", negative and malformed values are
// unknown.
func perMillion(raw json.RawMessage) (*big.Rat, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil || !priceRE().MatchString(s) {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, false
	}
	return r.Mul(r, million), true
}

// Source returns where the catalog came from.
func (c *Catalog) Source() Source { return c.src }

// Len returns the number of priced catalog keys (ids and canonical slugs).
func (c *Catalog) Len() int {
	if c == nil {
		return 0
	}
	return len(c.exact)
}

// Models returns the number of distinct priced ids: the rows [Catalog.IDs]
// lists (Len also counts canonical slugs that name the same model).
func (c *Catalog) Models() int {
	if c == nil {
		return 0
	}
	seen := make(map[string]bool, len(c.exact))
	for _, e := range c.exact {
		seen[e.id] = true
	}
	return len(seen)
}

// IDs returns the priced ids, sorted, with their USD per million output
// tokens (for `coagent8 prices show`).
func (c *Catalog) IDs() []Priced {
	seen := map[string]bool{}
	var out []Priced
	for _, e := range c.exact {
		if !seen[e.id] {
			seen[e.id] = true
			out = append(out, Priced{ID: e.id, RunID: e.runName(), PerMillion: new(big.Rat).Set(e.perMillion)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Priced is one catalog id and its output price in USD per million tokens.
type Priced struct {
	ID string // as the list spells it: "anthropic/claude-sonnet-5.5"
	// RunID is the id a backend CLI runs, the one an allow rule takes
	// (see [Catalog.Names]): "claude-sonnet-5-5".
	RunID      string
	PerMillion *big.Rat
}
