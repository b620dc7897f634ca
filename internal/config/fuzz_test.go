package config

import (
	"testing"
)

// FuzzGovernance: any governance section either yields valid rules or a
// KeyError-shaped refusal; it never panics and never yields a negative limit.
func FuzzGovernance(f *testing.F) {
	f.Add([]byte(`{"models":{"allow":["a"],"deny":["b"]},"askAbovePrice":20,"priceMultiplier":2}`))
	f.Add([]byte(`{"askAbovePrice":-1e2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := governanceRules(b)
		if err != nil {
			return
		}
		if r.AskAbovePrice().Sign() < 0 || r.PriceMultiplier().Sign() <= 0 {
			t.Fatalf("accepted limits %v, %v from %q", r.AskAbovePrice(), r.PriceMultiplier(), b)
		}
	})
}

// FuzzAllowEdit: an edit either fails or produces a document whose allow
// list contains the id.
func FuzzAllowEdit(f *testing.F) {
	f.Add([]byte(`{"governance":{"models":{"allow":["x"]}},"k":[1,2]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, changed, err := withAllowed(b, "new-model")
		if err != nil || !changed {
			return
		}
		top, err := decodeObject(out)
		if err != nil {
			t.Fatalf("edit produced invalid JSON: %v\n%s", err, out)
		}
		gov, _ := top.object("governance")
		models, _ := gov.object("models")
		raw, _ := models.get("allow")
		var allow []string
		if strictUnmarshal(raw, &allow) != nil || len(allow) == 0 || allow[len(allow)-1] != "new-model" {
			t.Fatalf("allow = %s", raw)
		}
	})
}
