package gate

import (
	"fmt"
	"math"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/secret"
)

// Provider names a model provider the gate can forward to.
type Provider string

// Providers.
const (
	Anthropic Provider = "anthropic"
	OpenAI    Provider = "openai"
)

// ParseProvider returns the Provider named s.
func ParseProvider(s string) (Provider, error) {
	switch p := Provider(s); p {
	case Anthropic, OpenAI:
		return p, nil
	}
	return "", fault.New(fault.InvalidInput, "gate.provider", fmt.Sprintf("unknown provider %q (want anthropic or openai)", s))
}

// State is a grant's lifecycle state. Only [Live] admits requests.
type State string

// Grant states.
const (
	Live    State = "live"
	Revoked State = "revoked"
	Settled State = "settled" // closed by its owner; final totals
)

// Price is a model's list price in USD per million tokens. A zero field is
// a genuinely free token class; budgets on requests and tokens still apply.
//
// LongContextTokens, when positive, is the provider's long-context tier
// (issue 18 scope 5; Anthropic: 200,000): a request whose total input —
// uncached, cache write and cache read — exceeds it is priced entirely at
// the Long* rates, as the provider bills it.
type Price struct {
	InputPerMTok      float64 `json:"input_per_mtok"`
	OutputPerMTok     float64 `json:"output_per_mtok"`
	CacheWritePerMTok float64 `json:"cache_write_per_mtok"`
	CacheReadPerMTok  float64 `json:"cache_read_per_mtok"`

	LongContextTokens     int64   `json:"long_context_tokens,omitempty"`
	LongInputPerMTok      float64 `json:"long_input_per_mtok,omitempty"`
	LongOutputPerMTok     float64 `json:"long_output_per_mtok,omitempty"`
	LongCacheWritePerMTok float64 `json:"long_cache_write_per_mtok,omitempty"`
	LongCacheReadPerMTok  float64 `json:"long_cache_read_per_mtok,omitempty"`
}

// at returns the rates that apply to a request with input tokens of
// input in total: the long-context tier's above its threshold.
func (p Price) at(input int64) Price {
	if p.LongContextTokens <= 0 || input <= p.LongContextTokens {
		return p
	}
	return Price{InputPerMTok: p.LongInputPerMTok, OutputPerMTok: p.LongOutputPerMTok,
		CacheWritePerMTok: p.LongCacheWritePerMTok, CacheReadPerMTok: p.LongCacheReadPerMTok}
}

// worst returns, for a request of at most input tokens, the dearest rate
// of each class it may be billed at (both tiers when it may cross the
// threshold), so a reservation bounds the charge.
func (p Price) worst(input int64) Price {
	q := p.at(input)
	return Price{InputPerMTok: max(p.InputPerMTok, q.InputPerMTok), OutputPerMTok: max(p.OutputPerMTok, q.OutputPerMTok),
		CacheWritePerMTok: max(p.CacheWritePerMTok, q.CacheWritePerMTok), CacheReadPerMTok: max(p.CacheReadPerMTok, q.CacheReadPerMTok)}
}

func (p Price) valid() bool {
	for _, r := range []float64{p.InputPerMTok, p.OutputPerMTok, p.CacheWritePerMTok, p.CacheReadPerMTok,
		p.LongInputPerMTok, p.LongOutputPerMTok, p.LongCacheWritePerMTok, p.LongCacheReadPerMTok} {
		if r < 0 || r != r || math.IsInf(r, 1) {
			return false
		}
	}
	return p.LongContextTokens == 0 || p.LongContextTokens > 0 && p.longAtLeastBase()
}

// longAtLeastBase reports whether every long-context rate is at least
// its base rate. Above the threshold the whole request is charged at the
// tier's rates, so a tier rate left out (0) or below the base priced the
// agent's longest requests lowest: `--price-long-context-tokens` without
// its rates made every request above it free (red team 3). Providers'
// long-context tiers are the dearer tier.
func (p Price) longAtLeastBase() bool {
	return p.LongInputPerMTok >= p.InputPerMTok && p.LongOutputPerMTok >= p.OutputPerMTok &&
		p.LongCacheWritePerMTok >= p.CacheWritePerMTok && p.LongCacheReadPerMTok >= p.CacheReadPerMTok
}

// Prices is the price catalog seam (the governance price catalog): Lookup
// reports the price of model at provider and whether the catalog knows it.
type Prices interface {
	Lookup(provider, model string) (Price, bool)
}

// NanoUSD is an amount of money in 1e-9 US dollars. Integer, so budgets
// compare exactly.
type NanoUSD int64

// USD converts a dollar amount, rounding up.
//
// NaN is 0 (no budget, refused); amounts at or above [maxAmount] saturate.
func USD(d float64) NanoUSD {
	if d != d {
		return 0
	}
	return NanoUSD(capped(math.Ceil(d * 1e9)))
}

// maxAmount caps one counted or priced amount (tokens or NanoUSD). Token
// counts come from request bodies the sandboxed agent writes and from
// provider usage reports; converted or summed unchecked, a count near 2^63
// wraps to a negative amount that every budget admits and settlement
// credits back. Saturating at 2^62 keeps a sum of two in int64, and any
// real budget refuses it.
const maxAmount = 1 << 62

// capped converts f to an amount, saturating NaN, +Inf and anything at or
// above maxAmount (never under-charge).
func capped(f float64) int64 {
	if !(f < maxAmount) {
		return maxAmount
	}
	return int64(f)
}

// sum adds non-negative amounts, saturating at maxAmount.
func sum(xs ...int64) int64 {
	var t int64
	for _, x := range xs {
		if x >= maxAmount-t {
			return maxAmount
		}
		t += x
	}
	return t
}

// Dollars returns n in dollars.
func (n NanoUSD) Dollars() float64 { return float64(n) / 1e9 }

// cost prices tokens at usdPerMTok, rounding up (never under-charge).
func cost(tokens int64, usdPerMTok float64) NanoUSD {
	return NanoUSD(capped(math.Ceil(float64(tokens) * usdPerMTok * 1e3)))
}

// Spec describes a grant to create. Every budget must be positive: there is
// no "unlimited" (notes/gate.md §4: a null budget must not mean unchecked).
type Spec struct {
	Provider Provider
	Model    string // exact model id the requests must name
	Job      string
	TTL      time.Duration
	// Secret references the real provider credential, resolved per
	// forwarded request. It must be the reference declared for Provider
	// in [Options.Credentials]; the zero Ref takes the declared one.
	Secret secret.Ref

	MaxRequests int64
	MaxTokens   int64   // input + output tokens, all classes
	MaxSpend    NanoUSD // priced with the catalog, else Price

	// Price is used when the catalog lacks the model; nil with no catalog
	// entry refuses the grant.
	Price *Price
	// OutputCeiling bounds the output reserved for a request that names no
	// max_tokens / max_output_tokens (0 = 128000).
	OutputCeiling int64
}

func (s Spec) validate() error {
	bad := func(reason, msg string) error { return fault.New(fault.InvalidInput, reason, msg) }
	switch {
	case s.Provider != Anthropic && s.Provider != OpenAI:
		return bad("gate.provider", "unknown provider")
	case !validModelID(s.Model):
		return bad("gate.model", "model must be an exact model id")
	case !validJobID(s.Job):
		return bad("gate.job", "job id must match [A-Za-z0-9][A-Za-z0-9._:-]{0,127} (a letter or digit first)")
	case s.TTL <= 0 || s.TTL > 7*24*time.Hour:
		return bad("gate.ttl", "ttl must be between 1ns and 7 days")
	case s.MaxRequests <= 0 || s.MaxTokens <= 0 || s.MaxSpend <= 0:
		return bad("gate.budget", "request, token and spend budgets must all be positive")
	case s.OutputCeiling < 0:
		return bad("gate.ceiling", "output ceiling must not be negative")
	case s.Price != nil && !s.Price.valid():
		return bad("gate.price", "prices and the long-context threshold must not be negative, and each long-context rate must be at least its base rate (give every --price-long-* with the threshold)")
	}
	return nil
}

// Grant is a grant's stored binding and counters, as [Gate.Inspect]
// returns it. It never holds the phantom credential or the real one.
type Grant struct {
	ID        string    `json:"id"`
	Provider  Provider  `json:"provider"`
	Model     string    `json:"model"`
	Job       string    `json:"job"`
	SecretRef string    `json:"secret_ref"`
	State     State     `json:"state"`
	Created   time.Time `json:"created"`
	Expires   time.Time `json:"expires"`
	Price     Price     `json:"price"`
	Ceiling   int64     `json:"output_ceiling"`
	Limits    Counters  `json:"limits"`
	Used      Counters  `json:"used"`
	Reserved  Counters  `json:"reserved"`
	// LastRefusal is the reason of the latest request of this grant that
	// the gate returning it refused (budget.request_spend, ...), "" when
	// it refused none. It is that process's memory, not the database's:
	// another process's gate, or this one after a restart, reports "".
	LastRefusal string `json:"last_refusal,omitempty"`
}

// Counters are request, token and spend amounts.
type Counters struct {
	Requests int64   `json:"requests"`
	Tokens   int64   `json:"tokens"`
	Spend    NanoUSD `json:"spend_nano_usd"`
}
