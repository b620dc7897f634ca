package operator

import (
	"sync"
	"time"
)

// bucket is a token bucket: burst tokens, refilled at one per every.
// Safe for concurrent use.
type bucket struct {
	mu     sync.Mutex
	burst  float64
	every  time.Duration
	tokens float64
	last   time.Time
	now    func() time.Time
}

func newBucket(burst int, every time.Duration, now func() time.Time) *bucket {
	return &bucket{burst: float64(burst), every: every, tokens: float64(burst), now: now, last: now()}
}

func (b *bucket) refill() {
	t := b.now()
	b.tokens = min(b.burst, b.tokens+float64(t.Sub(b.last))/float64(b.every))
	b.last = t
}

// take reports whether a token was available, consuming it; when not, it
// returns how long until the next one.
func (b *bucket) take() (ok bool, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) * float64(b.every))
}
