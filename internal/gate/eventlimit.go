package gate

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/coagent8/coagent8/internal/allowance"
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
// out when the job's grant ends (here, or by expiry or another process:
// [Gate.flushEnded]) or the gate closes is recorded then
// (ReasonEventsSuppressed). A job's first compromise event and the
// refusal that raised it, admissions and grant changes are never
// limited; a job's later signals have their own allowance ([Gate.firstSignal]).
// Refusals the egress decider records itself (a body or header carrying
// labelled content or a credential) are limited by the decider, per job,
// the same way (internal/egress, refusallimit.go); the gate adds no event
// of its own for them — except one the decider left out that raises a
// containment signal here ([Gate.deny]) — and has the decider account for
// what it left out whenever it accounts for its own ([Gate.flushSuppressed]).
const (
	eventBurst = 100
	eventRate  = 10 // per second
	// maxEventKeys bounds the allowances kept; past it they start afresh.
	maxEventKeys = 4096
)

// newEventLimiter is one of the gate's event allowances (free events,
// repeated signals) on clock now.
func newEventLimiter(now func() time.Time) (*allowance.Limiter, error) {
	return allowance.New(allowance.Config{Burst: eventBurst, Every: time.Second / eventRate, MaxKeys: maxEventKeys, Now: now})
}

// recordLimited records e unless the allowance of free events (refusals,
// hello probes) of key ([Gate.limitKey]) is spent.
func (g *Gate) recordLimited(key string, e event.Event) {
	g.recordWithin(g.events, "gate.events", key, e)
}

// recordWithin records e if l's allowance of key has room — carrying
// the count l left out since (ids.suppressed) — and accounts (as rule)
// for the counts l dropped when it started afresh.
func (g *Gate) recordWithin(l *allowance.Limiter, rule, key string, e event.Event) {
	ok, carried, dropped := l.Admit(key)
	g.recordSuppressedAs(rule, dropped)
	if ok {
		e.IDs = allowance.Carry(e.IDs, carried)
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
// event of the job carried the count: at the end of its grant (revoked or
// settled here, or noticed by the watcher: expired, or ended by another
// process), or when the gate closes.
const ReasonEventsSuppressed = "gate.events_suppressed"

// flushSuppressed records what is still left out for job (every job when
// job is nil), the egress decider's refusal records included.
func (g *Gate) flushSuppressed(job *string) {
	if job != nil {
		g.ended.Add(*job) // its grants' end: the watcher does not flush it again until it is granted anew
	}
	g.recordSuppressedAs("gate.events", takeSuppressed(g.events, job))
	g.recordSuppressedAs("gate.signals", takeSuppressed(g.repeats, job))
	g.flushRefusals(job)
}

// takeSuppressed takes l's count for job (every job's when job is nil).
func takeSuppressed(l *allowance.Limiter, job *string) map[string]int {
	if job == nil {
		return l.TakeAll()
	}
	if n := l.Take(*job); n > 0 {
		return map[string]int{*job: n}
	}
	return nil
}

// flushEnded records what is still left out for each job whose grants
// have all ended without this gate ending them — expired on the gate's
// clock, or revoked or settled by another process on the same database —
// which [Gate.end] never sees. The watcher calls it every WatchInterval;
// it reads the ledger only for jobs with a count left out. A job that
// has no grant yet keeps its count (its grant may still be made).
func (g *Gate) flushEnded(ctx context.Context) {
	jobs := append(g.events.Pending(), g.repeats.Pending()...)
	slices.Sort(jobs)
	for _, job := range slices.Compact(jobs) {
		if job == "" || g.ended.Has(job) {
			continue // anonymous; or flushed when its grants ended: later counts wait for the next event or Close
		}
		if ended, err := g.ledger.jobEnded(ctx, job, g.opts.Now()); err == nil && ended {
			g.flushSuppressed(&job)
		}
	}
}

// jobEnded reports whether job has grants and none of them is live at now.
func (l *ledger) jobEnded(ctx context.Context, job string, now time.Time) (bool, error) {
	var all, live int
	err := l.db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(state = ? AND expires_at > ?), 0) FROM gate_grants WHERE job = ?`,
		Live, now.UnixNano(), job).Scan(&all, &live)
	return all > 0 && live == 0, err
}

// recordSuppressedAs records a ReasonEventsSuppressed event (rule) for
// each key's count.
func (g *Gate) recordSuppressedAs(rule string, counts map[string]int) {
	for k, n := range counts {
		ids := map[string]string{allowance.IDSuppressed: strconv.Itoa(n)}
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
//
// firstSignal reports whether job raised no containment signal in this
// gate before, and notes that it has (an [allowance.Set]: past its
// bound a repeat is recorded as a first, never the other way).
func (g *Gate) firstSignal(job string) bool { return g.signals.Add(job) }

// recordSignal records e, an event of a containment signal of job: in
// full for the job's first signal, within the repeats' allowance after.
func (g *Gate) recordSignal(job string, first bool, e event.Event) {
	if first {
		g.record(e)
		return
	}
	g.recordWithin(g.repeats, "gate.signals", job, e)
}
