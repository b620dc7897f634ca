// Package allowance bounds the records one key (a job, a grant, a
// listener) can make a component write: a burst, then one more record per
// refill interval. What an allowance leaves out is counted, never lost:
// the next record admitted for the key carries the count
// ([IDSuppressed]), and what no later record carried is taken for a
// summary when the key's work ends ([Limiter.Take], [Limiter.TakeAll]).
//
// It is the one implementation behind the provider gate's event
// allowances (internal/gate), the dashboard's refusal recorder
// (internal/operator) and the egress decider's refusal records
// (internal/egress): each wrote one line or row per refused request, so a
// client looping on a refusal grew the host's event log and state
// database without bound.
package allowance

import (
	"maps"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/coagent8/coagent8/internal/fault"
)

// IDSuppressed is the event id (and the summary's) that carries how many
// records of a key were left out.
const IDSuppressed = "suppressed"

// Config shapes a [Limiter].
type Config struct {
	// Burst is how many records a key may make at once (> 0).
	Burst int
	// Every is the refill interval: one more record per Every (> 0).
	Every time.Duration
	// MaxKeys bounds the allowances kept (> 0); past it they start afresh
	// and the counts they held are handed back by [Limiter.Admit].
	MaxKeys int
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// Limiter keeps one allowance per key. Safe for concurrent use.
type Limiter struct {
	cfg  Config
	mu   sync.Mutex
	keys map[string]*bucket
}

type bucket struct {
	lim        *rate.Limiter
	suppressed int
}

// New validates c and returns its limiter: a *fault.Error
// (INVALID_INPUT, reason "allowance.config") when Burst, Every or MaxKeys
// is not positive.
func New(c Config) (*Limiter, error) {
	if c.Burst <= 0 || c.Every <= 0 || c.MaxKeys <= 0 {
		return nil, fault.New(fault.InvalidInput, "allowance.config", "an allowance needs a positive burst, refill interval and key bound")
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Limiter{cfg: c, keys: map[string]*bucket{}}, nil
}

// Admit reports whether a record of key may be written now. When it may,
// carried is how many records of key were left out since the last one
// admitted (the record carries it, [Carry]); when not, the record is
// counted as left out. dropped holds the counts of the allowances
// discarded because MaxKeys was reached (nil when none), for the caller
// to record as summaries: discarded silently, a flooding key's count
// vanished when other keys' first records filled the map.
func (l *Limiter) Admit(key string) (ok bool, carried int, dropped map[string]int) {
	now := l.cfg.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.keys[key]
	if b == nil {
		if len(l.keys) >= l.cfg.MaxKeys {
			dropped = l.takeLocked(func(string) bool { return true })
			l.keys = map[string]*bucket{}
		}
		b = &bucket{lim: rate.NewLimiter(rate.Every(l.cfg.Every), l.cfg.Burst)}
		l.keys[key] = b
	}
	if !b.lim.AllowN(now, 1) {
		b.suppressed++
		return false, 0, dropped
	}
	carried, b.suppressed = b.suppressed, 0
	return true, carried, dropped
}

// Take removes and returns the count left out for key (0 when none).
func (l *Limiter) Take(key string) int {
	return l.TakeIf(func(k string) bool { return k == key })[key]
}

// TakeAll removes and returns the counts left out, by key; keys with
// none are absent (nil when no key has any).
func (l *Limiter) TakeAll() map[string]int {
	return l.TakeIf(func(string) bool { return true })
}

// TakeIf is [Limiter.TakeAll] for the keys match reports true for (a
// job's keys, when a key joins the job with more).
func (l *Limiter) TakeIf(match func(key string) bool) map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.takeLocked(match)
}

// takeLocked takes the counts of the keys match reports true for; l.mu
// is held.
func (l *Limiter) takeLocked(match func(key string) bool) map[string]int {
	var out map[string]int
	for k, b := range l.keys {
		if b.suppressed > 0 && match(k) {
			if out == nil {
				out = map[string]int{}
			}
			out[k], b.suppressed = b.suppressed, 0
		}
	}
	return out
}

// Pending returns the keys with a count left out, in no order.
func (l *Limiter) Pending() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for k, b := range l.keys {
		if b.suppressed > 0 {
			out = append(out, k)
		}
	}
	return out
}

// Len returns how many allowances are kept (at most MaxKeys).
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

// Carry returns ids with [IDSuppressed] set to n when n > 0 — a copy, so
// a map the caller shares is not written — and ids itself otherwise.
func Carry(ids map[string]string, n int) map[string]string {
	if n <= 0 {
		return ids
	}
	out := maps.Clone(ids)
	if out == nil {
		out = map[string]string{}
	}
	out[IDSuppressed] = strconv.Itoa(n)
	return out
}
