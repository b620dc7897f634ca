package gate

import "sync"

// Unmetered requests — token counts (count_tokens) and model lists —
// cost no tokens and use no request of a grant's budget, yet each
// admitted one writes an attempt row and an event on the host. A
// delegated agent looping on one grew both without bound (red team
// 2026-12-06). A grant may make [unmeteredAllowance] of them in one
// gate, then they are refused budget.unmetered (402: never retried).

// unmeteredAllowance is how many unmetered requests a grant of requests
// metered requests may make: 256 (a CLI lists models and counts tokens
// a few times per session) plus four per metered request.
func unmeteredAllowance(requests int64) int64 { return 256 + 4*requests }

// unmeteredCounts counts each grant's unmetered requests in this gate.
// Past maxEventKeys grants it starts afresh (a grant may then make more,
// never fewer; each grant's own count stays bounded in between). Safe for
// concurrent use.
type unmeteredCounts struct {
	mu sync.Mutex
	n  map[string]int64
}

// take counts one unmetered request of grant and reports whether it is
// within limit.
func (c *unmeteredCounts) take(grant string, limit int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil || len(c.n) >= maxEventKeys && c.n[grant] == 0 {
		c.n = map[string]int64{}
	}
	if c.n[grant] >= limit {
		return false
	}
	c.n[grant]++
	return true
}
