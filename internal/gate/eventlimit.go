package gate

import (
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/coagent8/coagent8/internal/event"
)

// Limits of the events a client can make the gate write without spending
// any budget — refusals and hello probes — per job (anonymous requests
// share one allowance): a burst of 100, then 10 a second. A delegated
// agent looping on refused requests wrote 32,000 lines (8.6 MB) a second
// to events.jsonl on the host's disk, outside its sandbox's disk bound
// (sandbox red team). Nothing goes unaccounted: the gate's refusal
// counters count every refusal, the next event recorded for the job
// carries how many were left out (ids.suppressed), and what is still left
// out when the job's grant ends or the gate closes is recorded then
// (ReasonEventsSuppressed). Compromise events, admissions and grant
// changes are never limited.
const (
	eventBurst = 100
	eventRate  = 10 // per second
	// maxEventKeys bounds the allowances kept; past it they start afresh.
	maxEventKeys = 4096
)

// eventLimiter rate-limits the events of one job (key) at a time.
type eventLimiter struct {
	mu   sync.Mutex
	keys map[string]*eventAllowance
}

type eventAllowance struct {
	lim        *rate.Limiter
	suppressed int
}

// admit reports whether e may be written at now for key; when it may, e
// carries the number of events left out since the last one written.
func (l *eventLimiter) admit(key string, now time.Time, e *event.Event) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.keys == nil || len(l.keys) >= maxEventKeys {
		l.keys = map[string]*eventAllowance{}
	}
	a := l.keys[key]
	if a == nil {
		a = &eventAllowance{lim: rate.NewLimiter(eventRate, eventBurst)}
		l.keys[key] = a
	}
	if !a.lim.AllowN(now, 1) {
		a.suppressed++
		return false
	}
	if a.suppressed > 0 {
		ids := make(map[string]string, len(e.IDs)+1)
		for k, v := range e.IDs {
			ids[k] = v
		}
		ids["suppressed"] = strconv.Itoa(a.suppressed)
		e.IDs, a.suppressed = ids, 0
	}
	return true
}

// recordLimited records e unless the client's allowance of free events
// (refusals, hello probes) is spent.
func (g *Gate) recordLimited(e event.Event) {
	key := ""
	if e.IDs != nil {
		key = e.IDs["job"]
	}
	if g.events.admit(key, g.opts.Now(), &e) {
		g.record(e)
	}
}

// ReasonEventsSuppressed is the event that accounts for a job's refusals
// and hello probes left out of the log (ids.suppressed) when no later
// event of the job carried the count: at the end of its grant, or when
// the gate closes.
const ReasonEventsSuppressed = "gate.events_suppressed"

// take removes and returns the count left out for key (every key when
// key is nil).
func (l *eventLimiter) take(key *string) map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for k, a := range l.keys {
		if (key == nil || *key == k) && a.suppressed > 0 {
			out[k], a.suppressed = a.suppressed, 0
		}
	}
	return out
}

// flushSuppressed records what is still left out for job (every job when
// job is nil).
func (g *Gate) flushSuppressed(job *string) {
	for k, n := range g.events.take(job) {
		ids := map[string]string{"suppressed": strconv.Itoa(n)}
		if k != "" {
			ids["job"] = k
		}
		g.record(event.Event{Type: event.TypeDecision, Reason: ReasonEventsSuppressed, Rule: "gate.events", IDs: ids})
	}
}
