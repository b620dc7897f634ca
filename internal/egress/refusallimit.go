package egress

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/allowance"
	"github.com/coagent8/coagent8/internal/event"
)

// Limits of the refusal records — one event and one egress_record row
// each — a job's transmissions make the decider write: a burst of 100 per
// job and purpose, then one a second. A delegated agent looping on a
// refused post (labelled content in its body) wrote one event and one
// state-database row per request, without bound: the gate limits the
// refusals it records itself (internal/gate, eventlimit.go), but leaves
// the egress decider's to the decider. Only the records are limited:
// every refused transmission is still refused, with its reason.
//
// Nothing goes unaccounted: the next refusal recorded for the job
// carries how many were left out (the event's ids.suppressed, the row's
// suppressed), and what is still left out when the gate ends the job's
// grant or closes is recorded then ([Decider.FlushRefusals],
// [ReasonRefusalsSuppressed]). A job's first refusal that can raise a
// containment signal ([containment]) is always recorded in full; its
// later ones have their own allowance, which other refusals cannot
// spend.
const (
	refusalBurst = 100
	refusalEvery = time.Second
	// maxRefusalKeys bounds the allowances kept; past it they start
	// afresh, their counts recorded as summaries.
	maxRefusalKeys = 4096
)

// ReasonRefusalsSuppressed is the event and ledger record that accounts
// for a job's refusals left out of both (ids.suppressed, the record's
// Suppressed) when no later refusal of the job carried the count. Its
// rule names the allowance they were left out of: ruleRefusals or
// ruleContainment.
const ReasonRefusalsSuppressed = "egress.refusals_suppressed"

const (
	ruleRefusals    = "egress.refusals"
	ruleContainment = "egress.containment"
)

// Marks of a refusal's fault (detail "event"): its event and ledger
// record were written (EventRecorded), or left out within the job's
// allowance and counted (EventLimited). Either way the decider accounted
// for it, and the caller records no event of its own for it.
const (
	EventRecorded = "recorded"
	EventLimited  = "limited"
)

// refusalLimit holds the allowances of the refusal records.
type refusalLimit struct {
	free    *allowance.Limiter // every refusal but a job's containment ones
	repeats *allowance.Limiter // a job's containment refusals after its first
	seen    allowance.Set      // jobs whose first containment refusal was recorded
}

func newRefusalLimit(now func() time.Time) (*refusalLimit, error) {
	c := allowance.Config{Burst: refusalBurst, Every: refusalEvery, MaxKeys: maxRefusalKeys, Now: now}
	free, err := allowance.New(c)
	if err != nil {
		return nil, err
	}
	repeats, err := allowance.New(c)
	if err != nil {
		return nil, err
	}
	return &refusalLimit{free: free, repeats: repeats}, nil
}

// containment reports whether a refusal for reason can raise a
// containment signal: the provider gate contains a job whose request
// carried a credential, which the decider refuses as a non-declassifiable
// category (internal/gate, signalOf).
func containment(reason string) bool { return reason == ReasonCategory }

// refusalKey is the allowance of job's refusals of purpose p. Job ids
// hold no NUL (internal/gate validates them); splitKey inverts it.
func refusalKey(job string, p Purpose) string { return job + "\x00" + string(p) }

func splitKey(k string) (job string, p Purpose) {
	j, purpose, _ := strings.Cut(k, "\x00")
	return j, Purpose(purpose)
}

// admit reports whether the refusal of job's transmission for purpose p,
// for reason, is recorded, and the count it carries. dropped are the
// counts of the allowances rule's limiter discarded at its key bound.
func (l *refusalLimit) admit(job string, p Purpose, reason string) (ok bool, carried int, rule string, dropped map[string]int) {
	lim, rule := l.free, ruleRefusals
	if containment(reason) {
		if l.seen.Add(job) { // the job's first: past the set's bound a repeat counts as a first, never the other way
			return true, 0, ruleContainment, nil
		}
		lim, rule = l.repeats, ruleContainment
	}
	ok, carried, dropped = lim.Admit(refusalKey(job, p))
	return ok, carried, rule, dropped
}

// FlushRefusals records what is still left out of job's refusal records
// (one [ReasonRefusalsSuppressed] event and ledger record per purpose and
// allowance): the provider gate calls it when the job's grant ends.
func (d *Decider) FlushRefusals(ctx context.Context, job string) {
	mine := func(k string) bool { j, _ := splitKey(k); return j == job }
	d.recordLeftOut(ctx, ruleRefusals, d.refusals.free.TakeIf(mine))
	d.recordLeftOut(ctx, ruleContainment, d.refusals.repeats.TakeIf(mine))
}

// FlushAllRefusals is [Decider.FlushRefusals] for every job: the provider
// gate calls it when it closes.
func (d *Decider) FlushAllRefusals(ctx context.Context) {
	d.recordLeftOut(ctx, ruleRefusals, d.refusals.free.TakeAll())
	d.recordLeftOut(ctx, ruleContainment, d.refusals.repeats.TakeAll())
}

// recordLeftOut records a [ReasonRefusalsSuppressed] event and ledger
// record for each allowance key's count.
func (d *Decider) recordLeftOut(ctx context.Context, rule string, counts map[string]int) {
	for k, n := range counts {
		job, p := splitKey(k)
		ev := d.opts.Key.Digest(evidenceDomain(knownPurpose(p), "egress.suppressed"), leftOutEvidence(job, rule, n, d.opts.Now()))
		d.opts.Ledger.Append(ctx, Record{Purpose: string(p), Effect: "deny", Reason: ReasonRefusalsSuppressed,
			Evidence: ev, Suppressed: int64(n)})
		ids := map[string]string{allowance.IDSuppressed: strconv.Itoa(n), "decision": ev}
		if job != "" {
			ids["job"] = job
		}
		d.record(event.Event{Type: event.TypeDecision, Reason: ReasonRefusalsSuppressed, Rule: rule, IDs: ids})
	}
}

// leftOutEvidence is the restricted record a summary's EvidenceDigest@1
// is computed over: the job's digest (as a decision's), the allowance,
// the count and the time.
func leftOutEvidence(job, rule string, n int, now time.Time) []byte {
	h := sha256.New()
	jd := sha256.Sum256([]byte("job\x00" + job))
	h.Write(jd[:])
	h.Write([]byte(rule))
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(n)))
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(now.UnixNano())))
	return h.Sum(nil)
}
