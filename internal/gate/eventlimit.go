package gate

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/coagent8/coagent8/internal/event"
)

// Limits of the events a client can make the gate write without spending
// any budget — refusals and hello probes — per job ([Gate.limitKey]: the
// channel's, else the grant's; anonymous requests that came through no
// job's channel share one allowance): a burst of 100, then 10 a second. A delegated
// agent looping on refused requests wrote 32,000 lines (8.6 MB) a second
// to events.jsonl on the host's disk, outside its sandbox's disk bound
// (sandbox red team). Nothing goes unaccounted: the gate's refusal
// counters count every refusal, the next event recorded for the job
// carries how many were left out (ids.suppressed), and what is still left
// out when the job's grant ends or the gate closes is recorded then
// (ReasonEventsSuppressed). A job's first compromise event and the
// refusal that raised it, admissions and grant changes are never
// limited; a job's later signals have their own allowance (signalSeen).
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
// dropped is what was left out under the allowances it dropped to start
// afresh, to be recorded by the caller: dropped silently, a job's count
// vanished when other jobs' first events filled the map.
func (l *eventLimiter) admit(key string, now time.Time, e *event.Event) (ok bool, dropped map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.keys == nil || len(l.keys) >= maxEventKeys {
		for k, a := range l.keys {
			if a.suppressed > 0 {
				if dropped == nil {
					dropped = map[string]int{}
				}
				dropped[k] = a.suppressed
			}
		}
		l.keys = map[string]*eventAllowance{}
	}
	a := l.keys[key]
	if a == nil {
		a = &eventAllowance{lim: rate.NewLimiter(eventRate, eventBurst)}
		l.keys[key] = a
	}
	if !a.lim.AllowN(now, 1) {
		a.suppressed++
		return false, dropped
	}
	if a.suppressed > 0 {
		ids := make(map[string]string, len(e.IDs)+1)
		for k, v := range e.IDs {
			ids[k] = v
		}
		ids["suppressed"] = strconv.Itoa(a.suppressed)
		e.IDs, a.suppressed = ids, 0
	}
	return true, dropped
}

// recordLimited records e unless the allowance of free events (refusals,
// hello probes) of key ([Gate.limitKey]) is spent.
func (g *Gate) recordLimited(key string, e event.Event) {
	g.recordWithin(&g.events, "gate.events", key, e)
}

// recordWithin records e if l's allowance of key has room, and accounts
// (as rule) for the counts l dropped when it started afresh.
func (g *Gate) recordWithin(l *eventLimiter, rule, key string, e event.Event) {
	ok, dropped := l.admit(key, g.opts.Now(), &e)
	g.recordSuppressedAs(rule, dropped)
	if ok {
		g.record(e)
	}
}

// limitKey is the allowance r's free events are charged to: the job whose
// channel sent it ([Gate.ForJob], a per-job gate), else the job of the
// grant it authenticated as, else the anonymous allowance. Keyed by the
// grant alone, every request refused before authentication shared one
// allowance across the shared gate's jobs, so one job flooding refusals
// without a credential left every other job's anonymous refusals out of
// the log.
func (g *Gate) limitKey(r *http.Request, a *admission) string {
	if job, _ := r.Context().Value(jobKey{}).(string); job != "" {
		return job
	}
	if g.opts.Job != "" {
		return g.opts.Job
	}
	if a != nil {
		return a.grant.Job
	}
	return ""
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
	g.recordSuppressedAs("gate.events", g.events.take(job))
	g.recordSuppressedAs("gate.signals", g.repeats.take(job))
}

// recordSuppressedAs records a ReasonEventsSuppressed event (rule) for
// each key's count.
func (g *Gate) recordSuppressedAs(rule string, counts map[string]int) {
	for k, n := range counts {
		ids := map[string]string{"suppressed": strconv.Itoa(n)}
		if k != "" {
			ids["job"] = k
		}
		g.record(event.Event{Type: event.TypeDecision, Reason: ReasonEventsSuppressed, Rule: rule, IDs: ids})
	}
}

// Containment signals after a job's first. Every request with a phantom
// on an unadmitted route is a signal, also once the job is contained
// (the phantom still names its revoked grant), and each wrote a
// compromise event and its refusal unlimited: the refused-request loop
// this file bounds, moved to another route. A job's first signal in
// this gate is recorded in full, with its refusal; the repeats have an
// allowance of their own per job (the phantom's), which free events
// cannot spend, and are accounted for like them (rule gate.signals).
type signalSeen struct {
	mu   sync.Mutex
	jobs map[string]bool
}

// firstSignal reports whether job raised no containment signal in this
// gate before, and notes that it has. Past maxEventKeys jobs the set
// starts afresh: a repeat is then recorded as a first, never the other
// way.
func (g *Gate) firstSignal(job string) bool {
	s := &g.signals
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jobs[job] {
		return false
	}
	if s.jobs == nil || len(s.jobs) >= maxEventKeys {
		s.jobs = map[string]bool{}
	}
	s.jobs[job] = true
	return true
}

// recordSignal records e, an event of a containment signal of job: in
// full for the job's first signal, within the repeats' allowance after.
func (g *Gate) recordSignal(job string, first bool, e event.Event) {
	if first {
		g.record(e)
		return
	}
	g.recordWithin(&g.repeats, "gate.signals", job, e)
}
