package price

import (
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
