package price

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/policy"
)

const testList = `{"data":[
 {"id":"anthropic/claude-sonnet-4.5","canonical_slug":"anthropic/claude-4.5-sonnet-20250929","pricing":{"prompt":"0.000003","completion":"0.000015"}},
 {"id":"anthropic/claude-3.7-sonnet:thinking","pricing":{"completion":"0.000015"}},
 {"id":"openai/gpt-5.2-codex","pricing":{"completion":"0.000014"}},
 {"id":"openai/gpt-5.2","pricing":{"completion":"0.0000199999"}},
 {"id":"openai/gpt-free","pricing":{"completion":"0"}},
 {"id":"google/gemini-3-pro-preview","pricing":{"completion":"0.000012"}},
 {"id":"openrouter/auto","pricing":{"completion":"-1"}},
 {"id":"x/number","pricing":{"completion":0.00001}},
 {"id":"x/empty","pricing":{"completion":""}},
 {"id":"x/nan","pricing":{"completion":"NaN"}},
 {"id":"x/huge","pricing":{"completion":"1e999999999"}},
 {"id":"x/neg","pricing":{"completion":"-0.5"}},
 {"id":"no-author","pricing":{"completion":"0.000001"}},
 {"id":"x/bad id;rm","pricing":{"completion":"0.000001"}}
]}`

func mustParse(t *testing.T, s string) *Catalog {
	t.Helper()
	c, err := Parse([]byte(s), Source{Kind: KindLive})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

type quoted struct {
	ID, Price, Match string
}

func TestQuote(t *testing.T) {
	c := mustParse(t, testList)
	tests := []struct {
		backend, model string
		want           quoted
	}{
		{"claude", "claude-sonnet-4.5", quoted{"anthropic/claude-sonnet-4.5", "15", "exact"}},
		{"claude", "CLAUDE-SONNET-4.5", quoted{"anthropic/claude-sonnet-4.5", "15", "exact"}},
		{"claude", "claude-4.5-sonnet-20250929", quoted{"anthropic/claude-sonnet-4.5", "15", "exact"}},
		{"claude", "claude-3.7-sonnet:thinking", quoted{"anthropic/claude-3.7-sonnet:thinking", "15", "exact"}},
		{"claude", "claude-sonnet-4-5", quoted{"anthropic/claude-sonnet-4.5", "15", "approximate"}},
		{"claude", "claude-sonnet-4-5-20250929", quoted{"anthropic/claude-sonnet-4.5", "15", "approximate"}},
		{"claude", "claude-sonnet-4.5:nitro", quoted{"anthropic/claude-sonnet-4.5", "15", "approximate"}},
		{"claude", "anthropic/claude-sonnet-4.5", quoted{"anthropic/claude-sonnet-4.5", "15", "exact"}},
		{"codex", "gpt-5.2-codex", quoted{"openai/gpt-5.2-codex", "14", "exact"}},
		{"codex", "gpt-5.2", quoted{"openai/gpt-5.2", "199999/10000", "exact"}},
		{"codex", "gpt-free", quoted{"openai/gpt-free", "0", "exact"}},
		{"codex", "gpt-5-2-codex-latest", quoted{"openai/gpt-5.2-codex", "14", "approximate"}},
		{"agy", "gemini-3-pro-preview", quoted{"google/gemini-3-pro-preview", "12", "exact"}},
		{"agy", "claude-sonnet-4.5", quoted{"anthropic/claude-sonnet-4.5", "15", "exact"}},
		// The author comes from the backend: codex does not run Anthropic ids.
		{"codex", "claude-sonnet-4-5", quoted{"", "", "none"}},
		{"codex", "auto", quoted{"", "", "none"}},
		{"codex", "gpt-unknown", quoted{"", "", "none"}},
		{"codex", "bad;id", quoted{"", "", "none"}},
	}
	for _, tt := range tests {
		q := c.Quote(tt.backend, tt.model)
		got := quoted{q.ID, "", q.Match.String()}
		if q.PerMillion != nil {
			got.Price = q.PerMillion.RatString()
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Quote(%q, %q) (-want +got):\n%s", tt.backend, tt.model, diff)
		}
	}
}

func TestParseSkipsUnusablePrices(t *testing.T) {
	c := mustParse(t, testList)
	var ids []string
	for _, p := range c.IDs() {
		ids = append(ids, p.ID)
	}
	want := []string{"anthropic/claude-3.7-sonnet:thinking", "anthropic/claude-sonnet-4.5", "google/gemini-3-pro-preview",
		"openai/gpt-5.2", "openai/gpt-5.2-codex", "openai/gpt-free"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("IDs() (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "not json", "{}", `{"data":{}}`, `{"data":[]}`,
		`{"data":[{"id":"a/b","pricing":{"completion":"-1"}}]}`} {
		if _, err := Parse([]byte(in), Source{}); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", in)
		}
	}
	if _, err := Parse([]byte(`{"data":[]}`), Source{}); !errors.Is(err, ErrNoPrices) {
		t.Errorf("empty data: err = %v, want ErrNoPrices", err)
	}
}

func TestQuoteReturnsCopies(t *testing.T) {
	c := mustParse(t, testList)
	c.Quote("codex", "gpt-5.2").PerMillion.SetInt64(0)
	if got := c.Quote("codex", "gpt-5.2").PerMillion; got.Cmp(big.NewRat(199999, 10000)) != 0 {
		t.Errorf("catalog price changed through a Quote: %v", got)
	}
}

func TestEmbedded(t *testing.T) {
	c := Embedded()
	src := c.Source()
	if src.Kind != KindEmbedded || src.Date.IsZero() || !strings.Contains(src.Note, "NOT live") {
		t.Errorf("Embedded source = %+v; want kind embedded, a date and a not-live note", src)
	}
	// The models the three backends run by default must be priced.
	for _, m := range []struct{ backend, model string }{
		{"claude", "claude-sonnet-4.6"}, {"claude", "claude-opus-4.6"}, {"codex", "gpt-5.3-codex"},
		{"codex", "gpt-5.2-codex"}, {"agy", "gemini-3.1-pro-preview"},
	} {
		if q := c.Quote(m.backend, m.model); q.Match != policy.MatchExact {
			t.Errorf("embedded Quote(%s, %s) = %+v, want exact", m.backend, m.model, q)
		}
	}
	if q := c.Quote("codex", "gpt-5.2-codex"); q.PerMillion.Cmp(big.NewRat(14, 1)) != 0 {
		t.Errorf("gpt-5.2-codex = %v USD/M, want 14", q.PerMillion)
	}
}

// TestEmbeddedCurrentDefaults (issue 19 item 9): the default models of
// the pinned CLIs (Claude Code 2.1.328: claude-sonnet-5-5; Codex 0.169.0:
// gpt-6.1-sol) are priced, so a fresh install decides on a price instead
// of "no price known". Claude's dash id matches the dotted OpenRouter id
// only approximately, so it is still asked until remembered.
func TestEmbeddedCurrentDefaults(t *testing.T) {
	c := Embedded()
	tests := []struct {
		backend, model string
		want           quoted
		effect         policy.Effect
	}{
		{"codex", "gpt-6.1-sol", quoted{"openai/gpt-6.1-sol", "10", "exact"}, policy.Allow},
		{"claude", "claude-sonnet-5-5", quoted{"anthropic/claude-sonnet-5.5", "10", "approximate"}, policy.Ask},
		{"claude", "claude-sonnet-5.5", quoted{"anthropic/claude-sonnet-5.5", "10", "exact"}, policy.Allow},
		{"claude", "claude-opus-5-5", quoted{"anthropic/claude-opus-5.5", "20", "approximate"}, policy.Ask},
		{"codex", "gpt-6-astra", quoted{"openai/gpt-6-astra", "50", "exact"}, policy.Ask},
		{"codex", "gpt-6.1-terra", quoted{"", "", "none"}, policy.Ask},
	}
	for _, tt := range tests {
		q := c.Quote(tt.backend, tt.model)
		got := quoted{q.ID, ratOrEmpty(q), q.Match.String()}
		d := policy.Decide(policy.DefaultRules(), c, policy.Input{Backend: tt.backend, Requested: tt.model, Default: tt.model})
		if tt.model == "gpt-6-astra" {
			d = policy.Decide(policy.DefaultRules(), c, policy.Input{Backend: tt.backend, Requested: tt.model, Default: "gpt-6.1-sol"})
		}
		if got != tt.want || d.Effect != tt.effect {
			t.Errorf("Quote(%s, %s) = %+v, decision %v; want %+v, %v", tt.backend, tt.model, got, d.Effect, tt.want, tt.effect)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(testList))
	f.Add([]byte(`{"data":[{"id":"a/b","pricing":{"completion":"0.1e-3"}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b, Source{})
		if err != nil {
			return
		}
		for _, p := range c.IDs() {
			if p.PerMillion.Sign() < 0 || !validID(p.ID) {
				t.Fatalf("Parse admitted %q at %v", p.ID, p.PerMillion)
			}
		}
	})
}

func ratOrEmpty(q policy.Quote) string {
	if q.PerMillion == nil {
		return ""
	}
	return q.PerMillion.RatString()
}
