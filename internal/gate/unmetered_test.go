package gate

import (
	"testing"
)

// TestUnmeteredRequestsBounded: token counts cost nothing and use no
// request of the budget, but each admitted one writes an attempt row and
// an event; a grant may make unmeteredAllowance of them in one gate, then
// they are refused budget.unmetered (402, never retried) while its
// metered requests still pass. Another grant has its own count.
func TestUnmeteredRequestsBounded(t *testing.T) {
	f := newFixture(t, nil)
	s := spec(Anthropic)
	s.MaxRequests = 1
	gr, phantom := f.grant(s)
	count := "count_tokens:" + `{"model":"` + gr.Model + `","messages":[{"role":"user","content":"hi"}]}`
	limit := unmeteredAllowance(1)
	for i := range limit {
		if reason, status := sendBody(t, f, Anthropic, phantom, count); reason != "" || status != 200 {
			t.Fatalf("count_tokens %d of %d: reason %q, status %d", i+1, limit, reason, status)
		}
	}
	if reason, status := sendBody(t, f, Anthropic, phantom, count); reason != ReasonBudgetUnmetered || status != 402 {
		t.Errorf("count_tokens past the allowance: reason %q, status %d; want %s 402", reason, status, ReasonBudgetUnmetered)
	}
	if reason, status := sendBody(t, f, Anthropic, phantom, `{"model":"`+gr.Model+`","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`); reason != "" || status != 200 {
		t.Errorf("metered request after the unmetered allowance: reason %q, status %d; want admitted", reason, status)
	}
	other, otherPhantom := f.grant(spec(Anthropic))
	count = "count_tokens:" + `{"model":"` + other.Model + `","messages":[{"role":"user","content":"hi"}]}`
	if reason, status := sendBody(t, f, Anthropic, otherPhantom, count); reason != "" || status != 200 {
		t.Errorf("another grant's count_tokens: reason %q, status %d; want admitted", reason, status)
	}
}
