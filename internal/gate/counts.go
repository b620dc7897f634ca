package gate

import (
	"maps"
	"sync"
)

// refusals counts denials by reason (issue 18: bad input is refused,
// counted and recorded). Safe for concurrent use.
type refusals struct {
	mu sync.Mutex
	n  map[string]int64
}

func (c *refusals) add(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int64{}
	}
	c.n[reason]++
}

// Refusals returns how many requests this gate refused since [New], by
// denial reason (the Reason* constants and egress reasons). The map is a
// copy.
func (g *Gate) Refusals() map[string]int64 {
	g.refused.mu.Lock()
	defer g.refused.mu.Unlock()
	return maps.Clone(g.refused.n)
}
