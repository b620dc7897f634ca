package policy

import (
	"math/big"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeCatalog prices ids given as "id=price[~]" ("~" = approximate match).
type fakeCatalog map[string]Quote

func catalog(entries ...string) fakeCatalog {
	c := fakeCatalog{}
	for _, e := range entries {
		id, p, _ := strings.Cut(e, "=")
		m := MatchExact
		if p, ok := strings.CutSuffix(p, "~"); ok {
			c[strings.ToLower(id)] = Quote{ID: "vendor/" + id, PerMillion: rat(p), Match: MatchApprox}
			continue
		}
		c[strings.ToLower(id)] = Quote{ID: "vendor/" + id, PerMillion: rat(p), Match: m}
	}
	return c
}

func (c fakeCatalog) Len() int { return len(c) }
func (c fakeCatalog) Quote(_, model string) Quote {
	return c[strings.ToLower(model)]
}

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic("bad rat " + s)
	}
	return r
}

func rules(t *testing.T, c RulesConfig) Rules {
	t.Helper()
	r, err := NewRules(c)
	if err != nil {
		t.Fatalf("NewRules: %v", err)
	}
	return r
}

// outcome is the part of a Decision the table asserts.
type outcome struct {
	Effect   string
	Reason   string
	Rule     string
	Model    string
	Match    string
	Price    string // "" = nil
	Remember bool
}

func summarize(d Decision) outcome {
	o := outcome{Effect: d.Effect.String(), Reason: d.Reason, Rule: d.Rule, Model: d.Model,
		Match: d.PriceMatch.String(), Remember: d.Remember}
	if d.Price != nil {
		o.Price = d.Price.FloatString(2)
	}
	return o
}

func TestDecide(t *testing.T) {
	def := catalog("def=10") // the backend default priced 10 USD/M, exact
	with := func(extra ...string) fakeCatalog {
		c := catalog(extra...)
		for k, v := range def {
			c[k] = v
		}
		return c
	}
	tests := []struct {
		name  string
		rules RulesConfig
		cat   Catalog
		in    Input
		want  outcome
	}{
		// the lists decide before any price.
		{"allow beats price 500", RulesConfig{Allow: []string{"big"}}, with("big=500"), Input{Requested: "big", Default: "def"},
			outcome{"allow", ReasonAllowRule, `governance.models.allow["big"]`, "big", "none", "", false}},
		// deny > ask > allow.
		{"allow+deny denies", RulesConfig{Allow: []string{"m"}, Deny: []string{"m"}}, with("m=1"), Input{Requested: "m", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["m"]`, "m", "none", "", false}},
		{"allow+ask asks", RulesConfig{Allow: []string{"m"}, Ask: []string{"m"}}, with("m=1"), Input{Requested: "m", Default: "def"},
			outcome{"ask", ReasonAskRule, `governance.models.ask["m"]`, "m", "none", "", false}},
		{"ask+deny denies", RulesConfig{Ask: []string{"m"}, Deny: []string{"m"}}, with("m=1"), Input{Requested: "m", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["m"]`, "m", "none", "", false}},
		// effort variants, whole-id match, case-insensitive.
		{"deny covers -high", RulesConfig{Deny: []string{"gpt-5.2-codex"}}, with(), Input{Requested: "gpt-5.2-codex-high", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["gpt-5.2-codex"]`, "gpt-5.2-codex-high", "none", "", false}},
		{"deny covers :xhigh", RulesConfig{Deny: []string{"gpt-5.2-codex"}}, with(), Input{Requested: "gpt-5.2-codex:xhigh", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["gpt-5.2-codex"]`, "gpt-5.2-codex:xhigh", "none", "", false}},
		// Dot and dash versions are one id for deny and ask, never for
		// allow (newcomer report: deny "claude-opus-4.7" let
		// claude-opus-4-7 run).
		{"deny dot covers dash", RulesConfig{Deny: []string{"claude-opus-4.7"}}, with(), Input{Requested: "claude-opus-4-7", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["claude-opus-4.7"]`, "claude-opus-4-7", "none", "", false}},
		{"deny dash covers dot, effort too", RulesConfig{Deny: []string{"gpt-5-2"}}, with(), Input{Requested: "gpt-5.2-high", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["gpt-5-2"]`, "gpt-5.2-high", "none", "", false}},
		{"ask dot covers dash", RulesConfig{Ask: []string{"claude-opus-4.7"}}, with("claude-opus-4-7=1"), Input{Requested: "claude-opus-4-7", Default: "def"},
			outcome{"ask", ReasonAskRule, `governance.models.ask["claude-opus-4.7"]`, "claude-opus-4-7", "none", "", false}},
		{"allow dot does not cover dash", RulesConfig{Allow: []string{"big.1"}}, with("big-1=500"), Input{Requested: "big-1", Default: "def"},
			outcome{"ask", ReasonAboveLimit, "governance.askAbovePrice", "big-1", "exact", "500.00", false}},
		{"deny dot is still whole-id", RulesConfig{Deny: []string{"gpt-5.2"}}, with("gpt-5-2-codex=14"), Input{Requested: "gpt-5-2-codex", Default: "def"},
			outcome{"allow", ReasonBelowLimits, "", "gpt-5-2-codex", "exact", "14.00", false}},
		{"deny is whole-id", RulesConfig{Deny: []string{"gpt-5.2"}}, with("gpt-5.2-codex=14"), Input{Requested: "gpt-5.2-codex", Default: "def"},
			outcome{"allow", ReasonBelowLimits, "", "gpt-5.2-codex", "exact", "14.00", false}},
		// Deny and ask cover the same model in another spelling: dated
		// snapshots, provider and router prefixes and variants, -latest,
		// a .0 minor version (red team: deny "gpt-5" asked for these).
		{"deny covers a dated snapshot", RulesConfig{Deny: []string{"gpt-5"}}, with(), Input{Requested: "gpt-5-2025-08-07", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["gpt-5"]`, "gpt-5-2025-08-07", "none", "", false}},
		{"deny covers a compact date", RulesConfig{Deny: []string{"claude-sonnet-4.5"}}, with(), Input{Requested: "claude-sonnet-4-5-20250929", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["claude-sonnet-4.5"]`, "claude-sonnet-4-5-20250929", "none", "", false}},
		{"deny covers a provider prefix", RulesConfig{Deny: []string{"gpt-5"}}, with(), Input{Requested: "openai/gpt-5", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["gpt-5"]`, "openai/gpt-5", "none", "", false}},
		{"prefixed deny covers the bare id", RulesConfig{Deny: []string{"openai/gpt-5"}}, with(), Input{Requested: "gpt-5", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["openai/gpt-5"]`, "gpt-5", "none", "", false}},
		{"deny covers a router variant", RulesConfig{Deny: []string{"gpt-5"}}, with(), Input{Requested: "gpt-5:nitro", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["gpt-5"]`, "gpt-5:nitro", "none", "", false}},
		{"deny covers .0", RulesConfig{Deny: []string{"gpt-5"}}, with(), Input{Requested: "gpt-5.0", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["gpt-5"]`, "gpt-5.0", "none", "", false}},
		{"deny covers -latest", RulesConfig{Deny: []string{"claude-3-7-sonnet"}}, with(), Input{Requested: "claude-3-7-sonnet-latest", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["claude-3-7-sonnet"]`, "claude-3-7-sonnet-latest", "none", "", false}},
		{"ask covers a dated snapshot", RulesConfig{Ask: []string{"gpt-5"}}, with("gpt-5-2025-08-07=1"), Input{Requested: "gpt-5-2025-08-07", Default: "def"},
			outcome{"ask", ReasonAskRule, `governance.models.ask["gpt-5"]`, "gpt-5-2025-08-07", "none", "", false}},
		{"allow does not cover a dated snapshot", RulesConfig{Allow: []string{"big"}}, with("big-2025-08-07=500"), Input{Requested: "big-2025-08-07", Default: "def"},
			outcome{"ask", ReasonAboveLimit, "governance.askAbovePrice", "big-2025-08-07", "exact", "500.00", false}},
		// Claude Code's context-window variant ("[1m]") and suffixes in
		// another order are the same model: a deny answered a
		// rememberable ask for them.
		{"deny covers [1m]", RulesConfig{Deny: []string{"claude-opus-4-6"}}, with(), Input{Requested: "claude-opus-4-6[1m]", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["claude-opus-4-6"]`, "claude-opus-4-6[1m]", "none", "", false}},
		{"deny covers a prefixed dated [1m]", RulesConfig{Deny: []string{"claude-opus-4.6"}}, with(), Input{Requested: "anthropic/claude-opus-4-6-20260101[1M]", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["claude-opus-4.6"]`, "anthropic/claude-opus-4-6-20260101[1M]", "none", "", false}},
		{"deny covers an effort after the date", RulesConfig{Deny: []string{"gpt-5"}}, with(), Input{Requested: "gpt-5-high-2025-08-07", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["gpt-5"]`, "gpt-5-high-2025-08-07", "none", "", false}},
		{"ask covers [1m]", RulesConfig{Ask: []string{"claude-opus-4-6"}}, with("claude-opus-4-6[1m]=1"), Input{Requested: "claude-opus-4-6[1m]", Default: "def"},
			outcome{"ask", ReasonAskRule, `governance.models.ask["claude-opus-4-6"]`, "claude-opus-4-6[1m]", "none", "", false}},
		{"allow does not cover [1m]", RulesConfig{Allow: []string{"big"}}, with("big[1m]=500"), Input{Requested: "big[1m]", Default: "def"},
			outcome{"ask", ReasonAboveLimit, "governance.askAbovePrice", "big[1m]", "exact", "500.00", false}},
		{"deny of a snapshot is not the family", RulesConfig{Deny: []string{"gpt-5-mini-2025-08-07"}}, with("gpt-5-2025-08-07=1"), Input{Requested: "gpt-5-2025-08-07", Default: "def"},
			outcome{"allow", ReasonBelowLimits, "", "gpt-5-2025-08-07", "exact", "1.00", false}},
		{"deny not a prefix rule", RulesConfig{Deny: []string{"gpt-5"}}, with(), Input{Requested: "gpt-5-mini", Default: "def"},
			outcome{"ask", ReasonUnpriced, "", "gpt-5-mini", "none", "", true}},
		{"deny ignores case", RulesConfig{Deny: []string{"GPT-5"}}, with(), Input{Requested: "gpt-5", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["GPT-5"]`, "gpt-5", "none", "", false}},
		{"unknown suffix not stripped", RulesConfig{Deny: []string{"m"}}, with(), Input{Requested: "m-turbo", Default: "def"},
			outcome{"ask", ReasonUnpriced, "", "m-turbo", "none", "", true}},
		// a cheap denied model, a denied default.
		{"denied cheap model", RulesConfig{Deny: []string{"cheap"}}, with("cheap=0.10"), Input{Requested: "cheap", Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["cheap"]`, "cheap", "none", "", false}},
		{"denied default", RulesConfig{Deny: []string{"def"}}, with(), Input{Default: "def"},
			outcome{"deny", ReasonDenyRule, `governance.models.deny["def"]`, "def", "none", "", false}},
		// ask-listed, priced 1, every turn, not rememberable.
		{"ask-listed cheap", RulesConfig{Ask: []string{"m"}}, with("m=1"), Input{Requested: "m", Default: "def"},
			outcome{"ask", ReasonAskRule, `governance.models.ask["m"]`, "m", "none", "", false}},
		// R-026 boundaries with defaults (default priced 10).
		{"15 runs", RulesConfig{}, with("m=15"), Input{Requested: "m", Default: "def"},
			outcome{"allow", ReasonBelowLimits, "", "m", "exact", "15.00", false}},
		{"19.99 runs", RulesConfig{}, with("m=19.99"), Input{Requested: "m", Default: "def"},
			outcome{"allow", ReasonBelowLimits, "", "m", "exact", "19.99", false}},
		{"20.00 asked", RulesConfig{}, with("m=20.00"), Input{Requested: "m", Default: "def"},
			outcome{"ask", ReasonAboveLimit, "governance.askAbovePrice", "m", "exact", "20.00", false}},
		{"19.999999 runs", RulesConfig{}, with("m=19.999999"), Input{Requested: "m", Default: "def"},
			outcome{"allow", ReasonBelowLimits, "", "m", "exact", "20.00", false}},
		{"exactly 2x default asked", RulesConfig{AskAbovePrice: rat("50")}, with("m=20"), Input{Requested: "m", Default: "def"},
			outcome{"ask", ReasonAboveMultiplier, "governance.priceMultiplier", "m", "exact", "20.00", false}},
		{"just under 2x runs", RulesConfig{AskAbovePrice: rat("50")}, with("m=19.99"), Input{Requested: "m", Default: "def"},
			outcome{"allow", ReasonBelowLimits, "", "m", "exact", "19.99", false}},
		{"multiplier 1.5 boundary", RulesConfig{PriceMultiplier: rat("1.5")}, with("m=15"), Input{Requested: "m", Default: "def"},
			outcome{"ask", ReasonAboveMultiplier, "governance.priceMultiplier", "m", "exact", "15.00", false}},
		{"multiplier 1.5 below", RulesConfig{PriceMultiplier: rat("1.5")}, with("m=14.99"), Input{Requested: "m", Default: "def"},
			outcome{"allow", ReasonBelowLimits, "", "m", "exact", "14.99", false}},
		{"approximate 5 asked", RulesConfig{}, with("m=5~"), Input{Requested: "m", Default: "def"},
			outcome{"ask", ReasonApproximate, "", "m", "approximate", "5.00", true}},
		{"askAbovePrice 0 asks everything priced", RulesConfig{AskAbovePrice: rat("0")}, with("m=0"), Input{Requested: "m", Default: "def"},
			outcome{"ask", ReasonAboveLimit, "governance.askAbovePrice", "m", "exact", "0.00", false}},
		// Zero-priced models pass; a zero-priced default makes the multiplier unmeetable.
		{"zero price passes", RulesConfig{}, with("free=0"), Input{Requested: "free", Default: "def"},
			outcome{"allow", ReasonBelowLimits, "", "free", "exact", "0.00", false}},
		{"zero default blocks multiplier", RulesConfig{}, catalog("free=0", "zd=0"), Input{Requested: "free", Default: "zd"},
			outcome{"ask", ReasonAboveMultiplier, "governance.priceMultiplier", "free", "exact", "0.00", false}},
		// the default is subject to askAbovePrice, not to the multiplier.
		{"default priced 25 asked", RulesConfig{}, catalog("def=25"), Input{Default: "def"},
			outcome{"ask", ReasonAboveLimit, "governance.askAbovePrice", "def", "exact", "25.00", false}},
		{"default priced 10 runs", RulesConfig{}, with(), Input{Default: "def"},
			outcome{"allow", ReasonBelowLimits, "", "def", "exact", "10.00", false}},
		{"default named explicitly", RulesConfig{PriceMultiplier: rat("0.5")}, with(), Input{Requested: "DEF", Default: "def"},
			outcome{"allow", ReasonBelowLimits, "", "DEF", "exact", "10.00", false}},
		// at or above a limit is never rememberable (asserted by Remember=false above).
		// unpriced → rememberable.
		{"unpriced asked, rememberable", RulesConfig{}, with(), Input{Requested: "new", Default: "def"},
			outcome{"ask", ReasonUnpriced, "", "new", "none", "", true}},
		// no price data.
		{"no catalog asks default", RulesConfig{}, nil, Input{Default: "def"},
			outcome{"ask", ReasonNoPriceData, "", "def", "none", "", true}},
		{"empty catalog asks", RulesConfig{}, catalog(), Input{Requested: "m", Default: "def"},
			outcome{"ask", ReasonNoPriceData, "", "m", "none", "", true}},
		{"no catalog, allow-listed runs", RulesConfig{Allow: []string{"m"}}, nil, Input{Requested: "m", Default: "def"},
			outcome{"allow", ReasonAllowRule, `governance.models.allow["m"]`, "m", "none", "", false}},
		// default unknown or only approximate → multiplier unmet.
		{"default unpriced", RulesConfig{}, catalog("m=1"), Input{Requested: "m", Default: "def"},
			outcome{"ask", ReasonDefaultUnpriced, "governance.priceMultiplier", "m", "exact", "1.00", false}},
		{"default approximate", RulesConfig{}, catalog("m=1", "def=10~"), Input{Requested: "m", Default: "def"},
			outcome{"ask", ReasonDefaultUnpriced, "governance.priceMultiplier", "m", "exact", "1.00", false}},
		{"default unknown", RulesConfig{}, catalog("m=1"), Input{Requested: "m"},
			outcome{"ask", ReasonDefaultUnpriced, "governance.priceMultiplier", "m", "exact", "1.00", false}},
		// unresolved; AUD-P1-6: malformed ids.
		{"unresolved", RulesConfig{}, with(), Input{},
			outcome{"deny", ReasonUnresolved, "", "", "none", "", false}},
		{"flag-like id", RulesConfig{Allow: []string{"m"}}, with(), Input{Requested: "--yolo", Default: "def"},
			outcome{"deny", ReasonInvalidModel, "", "--yolo", "none", "", false}},
		{"shell metacharacter", RulesConfig{}, with(), Input{Requested: "m;rm -rf", Default: "def"},
			outcome{"deny", ReasonInvalidModel, "", "m;rm -rf", "none", "", false}},
		{"control character", RulesConfig{}, with(), Input{Requested: "m\n", Default: "def"},
			outcome{"deny", ReasonInvalidModel, "", "m\n", "none", "", false}},
		{"invalid default", RulesConfig{}, with(), Input{Default: "$(id)"},
			outcome{"deny", ReasonInvalidModel, "", "$(id)", "none", "", false}},
		// §5: a price for X covers X-high unless X-high has its own entry.
		{"effort variant priced by base", RulesConfig{}, with("x=5"), Input{Requested: "x-high", Default: "def"},
			outcome{"allow", ReasonBelowLimits, "", "x-high", "exact", "5.00", false}},
		{"own -high entry wins", RulesConfig{}, with("x=5", "x-high=30"), Input{Requested: "x-high", Default: "def"},
			outcome{"ask", ReasonAboveLimit, "governance.askAbovePrice", "x-high", "exact", "30.00", false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(Decide(rules(t, tt.rules), tt.cat, tt.in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide(%+v) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestZeroRulesAskEveryPricedModel(t *testing.T) {
	d := Decide(Rules{}, catalog("m=0.01", "def=10"), Input{Requested: "m", Default: "def"})
	if got, want := summarize(d), (outcome{"ask", ReasonAboveLimit, "governance.askAbovePrice", "m", "exact", "0.01", false}); got != want {
		t.Errorf("zero Rules: got %+v, want %+v", got, want)
	}
}

func TestDecisionCarriesLimits(t *testing.T) {
	d := Decide(DefaultRules(), nil, Input{Backend: "codex", Default: "def", Effort: "high"})
	if d.AskAbove.Cmp(big.NewRat(20, 1)) != 0 || d.Multiplier.Cmp(big.NewRat(2, 1)) != 0 {
		t.Errorf("limits = %v, %v; want 20, 2", d.AskAbove, d.Multiplier)
	}
	if d.Backend != "codex" || d.Effort != "high" || !d.IsDefault {
		t.Errorf("Decision = %+v; want backend codex, effort high, IsDefault", d)
	}
	// The limits are copies: changing them must not change the Rules.
	d.AskAbove.SetInt64(1000)
	if DefaultRules().AskAbovePrice().Cmp(big.NewRat(20, 1)) != 0 {
		t.Error("DefaultRules shares its limit with a Decision")
	}
}
