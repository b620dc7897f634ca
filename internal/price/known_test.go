package price

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUnpricedIDs: the snapshot's unpricedIds are the ids its Unpriced
// note names, and none has a price (else it would not be unpriced).
func TestUnpricedIDs(t *testing.T) {
	emb := Embedded()
	ids := UnpricedIDs()
	if len(ids) == 0 {
		t.Fatal("no unpricedIds in the embedded snapshot")
	}
	for _, id := range ids {
		if !strings.Contains(emb.Source().Unpriced, id) || emb.Knows(id) {
			t.Errorf("%s: in the Unpriced note %v, priced %v; want in it and unpriced", id, strings.Contains(emb.Source().Unpriced, id), emb.Knows(id))
		}
	}
}

// TestKnowsAndNames: Knows takes an id as a CLI names it; Names lists ids
// in that form (Anthropic's with dashes), without authors.
func TestKnowsAndNames(t *testing.T) {
	emb := Embedded()
	got := map[string]bool{}
	for _, id := range []string{"claude-sonnet-4-5", "claude-sonnet-4.5", "gpt-5.1", "gemini-2.5-pro", "claude-sonet-4", "gpt-5.1x"} {
		got[id] = emb.Knows(id)
	}
	want := map[string]bool{"claude-sonnet-4-5": true, "claude-sonnet-4.5": true, "gpt-5.1": true, "gemini-2.5-pro": true,
		"claude-sonet-4": false, "gpt-5.1x": false}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Knows (-want +got):\n%s", d)
	}
	names := strings.Join(emb.Names(), " ")
	for _, n := range []string{"claude-sonnet-4-5", "gpt-5.1", "gemini-2.5-pro"} {
		if !strings.Contains(" "+names+" ", " "+n+" ") {
			t.Errorf("Names lacks %s: %s", n, names)
		}
	}
	if strings.Contains(names, "/") || strings.Contains(names, "claude-sonnet-4.5") {
		t.Errorf("Names has an author or a dotted Anthropic id: %s", names)
	}
	var nilCat *Catalog
	if nilCat.Knows("gpt-5.1") || nilCat.Names() != nil {
		t.Error("a nil catalog knows something")
	}
}

// TestRunID: RunID gives the id a backend CLI runs for an id as the price
// list (or a user copying from it) spells it: no author or router prefix,
// no routing variant, the version spelt as the CLI spells it (Anthropic
// with dashes, OpenAI and Google with dots), a dated, -latest or effort
// suffix kept. known says whether the catalog knows the model; an unknown
// id only loses what no CLI ever runs.
func TestRunID(t *testing.T) {
	emb := Embedded()
	tests := []struct {
		id, want string
		known    bool
	}{
		{"claude-sonnet-5-5", "claude-sonnet-5-5", true},
		{"CLAUDE-SONNET-5-5", "CLAUDE-SONNET-5-5", true},
		{"claude-sonnet-5.5", "claude-sonnet-5-5", true},
		{"anthropic/claude-sonnet-5.5", "claude-sonnet-5-5", true},
		{"anthropic/claude-sonnet-4.5-20250929", "claude-sonnet-4-5-20250929", true},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929", true},
		{"gpt-6.1-sol", "gpt-6.1-sol", true},
		{"openai/gpt-6.1-sol", "gpt-6.1-sol", true},
		{"gpt-6-1-sol", "gpt-6.1-sol", true},
		{"gpt-6.1-sol:nitro", "gpt-6.1-sol", true},
		{"gpt-5.2-high", "gpt-5.2-high", true},
		{"gpt-5-2-high", "gpt-5.2-high", true},
		{"gpt-5.1-codex-max", "gpt-5.1-codex-max", true},
		{"gpt-5-1-codex-max", "gpt-5.1-codex-max", true},
		{"gpt-5.4-2026-03-05", "gpt-5.4-2026-03-05", true},
		{"google/gemini-2.5-pro", "gemini-2.5-pro", true},
		{"gemini-2-5-pro", "gemini-2.5-pro", true},
		{"gpt-5-mini", "gpt-5-mini", true},
		{"openai/gpt-7-new", "gpt-7-new", false},
		{"claude-opus-9.1", "claude-opus-9-1", false},
		{"totally-unknown", "totally-unknown", false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			run, known := emb.RunID(tt.id)
			if d := cmp.Diff([]any{tt.want, tt.known}, []any{run, known}); d != "" {
				t.Errorf("RunID (-want +got):\n%s", d)
			}
		})
	}
	var nilCat *Catalog
	if run, known := nilCat.RunID("openai/gpt-5.1"); run != "gpt-5.1" || known {
		t.Errorf("nil catalog: RunID = %q, %v; want gpt-5.1, false", run, known)
	}
}

// TestRunIDListingVariants (red team): OpenRouter lists a model also
// under variants no CLI runs — ":thinking", ":free", ":extended",
// ":beta" besides the routing ones — and a refreshed price list carries
// them. RunID, Names and IDs dropped only the routing variants, so
// `prices show` named claude-3-7-sonnet:thinking as the id the backend
// runs and `governance allow` took it (known, and already in the run
// spelling): an allow rule that never applies. A reasoning-effort
// suffix (":high") is kept: a rule names it.
func TestRunIDListingVariants(t *testing.T) {
	c := mustParse(t, `{"data":[
 {"id":"anthropic/claude-3.7-sonnet","pricing":{"completion":"0.000015"}},
 {"id":"anthropic/claude-3.7-sonnet:thinking","pricing":{"completion":"0.000015"}},
 {"id":"openai/gpt-oss-120b:free","pricing":{"completion":"0"}},
 {"id":"openai/gpt-4o:extended","pricing":{"completion":"0.000018"}},
 {"id":"openai/gpt-4o","pricing":{"completion":"0.00001"}}
]}`)
	got := map[string]string{}
	for _, id := range []string{"anthropic/claude-3.7-sonnet:thinking", "claude-3-7-sonnet:thinking", "openai/gpt-oss-120b:free",
		"gpt-4o:extended", "gpt-4o:beta:nitro", "gpt-4o:high", "gpt-4o:nitro:high"} {
		run, known := c.RunID(id)
		got[id] = fmt.Sprint(run, " ", known)
	}
	for _, p := range c.IDs() {
		got["IDs "+p.ID] = p.RunID
	}
	got["Names"] = strings.Join(c.Names(), " ")
	want := map[string]string{
		"anthropic/claude-3.7-sonnet:thinking":     "claude-3-7-sonnet true",
		"claude-3-7-sonnet:thinking":               "claude-3-7-sonnet true",
		"openai/gpt-oss-120b:free":                 "gpt-oss-120b true",
		"gpt-4o:extended":                          "gpt-4o true",
		"gpt-4o:beta:nitro":                        "gpt-4o true",
		"gpt-4o:high":                              "gpt-4o:high true",
		"gpt-4o:nitro:high":                        "gpt-4o:high true",
		"IDs anthropic/claude-3.7-sonnet":          "claude-3-7-sonnet",
		"IDs anthropic/claude-3.7-sonnet:thinking": "claude-3-7-sonnet",
		"IDs openai/gpt-oss-120b:free":             "gpt-oss-120b",
		"IDs openai/gpt-4o:extended":               "gpt-4o",
		"IDs openai/gpt-4o":                        "gpt-4o",
		"Names":                                    "claude-3-7-sonnet gpt-4o gpt-oss-120b",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("run ids (-want +got):\n%s", d)
	}
}
