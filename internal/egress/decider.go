package egress

import (
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coagent8/coagent8/internal/allowance"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/evidence"
	"github.com/coagent8/coagent8/internal/fault"
)

// Options configure a [Decider]. Policy, Ledger and a non-zero Key are
// required; Lineage is required whenever the policy has path labels
// (without it every decision under such a policy refuses as unknown
// lineage).
type Options struct {
	Policy  *Policy
	Lineage LineageSource
	Ledger  Ledger
	Key     evidence.Key
	// Events receives one event per decision, refusals within their
	// job's allowance (refusallimit.go) (nil = event.Discard).
	Events event.Sink
	// Principal is the local operator subject; only its digest is kept.
	Principal string
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// state is a policy with the lineage source built for its labels; they
// are swapped together so label indexes always agree.
type state struct {
	p   *Policy
	src LineageSource
}

// Decider settles egress decisions. Safe for concurrent use.
type Decider struct {
	opts      Options
	cur       atomic.Pointer[state]
	gen       atomic.Uint64
	principal [32]byte
	refusals  *refusalLimit // the allowances of refusal records, per job
}

// New validates opts and returns a decider.
func New(opts Options) (*Decider, error) {
	if opts.Policy == nil || opts.Ledger == nil || opts.Key.Epoch() == 0 {
		return nil, fault.New(fault.InvalidInput, "egress.options", "egress decider needs a policy, a ledger and an evidence key")
	}
	if opts.Events == nil {
		opts.Events = event.Discard{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	refusals, err := newRefusalLimit(opts.Now)
	if err != nil {
		return nil, err
	}
	d := &Decider{opts: opts, principal: sha256.Sum256([]byte("principal\x00" + opts.Principal)), refusals: refusals}
	d.cur.Store(&state{opts.Policy, opts.Lineage})
	return d, nil
}

// SetPolicy replaces the policy and its lineage source. Decisions made
// under the previous policy no longer admit a send.
func (d *Decider) SetPolicy(p *Policy, src LineageSource) {
	d.cur.Store(&state{p, src})
}

// Transmission is one actual send: who (job), for what purpose, to which
// target, which exact bytes. JSON marks a JSON body (only its string
// contents are fingerprinted; a malformed one has unknown lineage).
//
// Method and Headers complete the wire (issue 18 scope 1): the decision
// binds the digest of method, target, every forwarded header in order and
// the body, and decides the header values like the body. Dropped names
// the client headers the caller did not forward; only the names enter
// the decision record (the event), never their values.
type Transmission struct {
	Job     string
	Purpose Purpose
	Target  Target
	Method  string
	Headers []Header
	Dropped []string
	Body    []byte
	JSON    bool
}

// Seal decides t and admits it at once: it returns the exact bytes to
// send (t.Body, or the filtered candidate) after the disclosure budget
// was consumed, or a *fault.Error (code POLICY_DENIED, reason one of the
// Reason constants) and nothing may be sent. Call it once per actual
// transmission, a retry included.
func (d *Decider) Seal(ctx context.Context, t Transmission) ([]byte, error) {
	dec, wire, err := d.Decide(ctx, t)
	if err != nil {
		return nil, err
	}
	if err := d.Admit(ctx, dec, wire, t); err != nil {
		return nil, err
	}
	return wire, nil
}

// Decide classifies t under the current policy and returns an allowing
// decision with the candidate bytes it binds, or a denying decision and
// its refusal. Nothing is consumed until [Decider.Admit].
func (d *Decider) Decide(ctx context.Context, t Transmission) (*Decision, []byte, error) {
	st, now := d.cur.Load(), d.opts.Now()
	dec := &Decision{id: newID(), principal: d.principal, job: sha256.Sum256([]byte("job\x00" + t.Job)),
		transmission: d.gen.Add(1), purpose: t.Purpose, policy: st.p.revision, expires: now.Add(st.p.ttl)}
	if t.Target != nil {
		dec.kind, dec.target, dec.custody = t.Target.Kind(), targetDigest(t.Target), custodyRecord(t.Target)
	}
	wire, basis, reason := d.judge(st, t, now, dec)
	if reason != ReasonRaw && reason != ReasonFiltered {
		dec.effect, dec.reason = Deny, reason
		return dec, nil, d.refuse(ctx, dec, t.Job, reason)
	}
	dec.effect, dec.reason, dec.basis, dec.wire = Allow, reason, basis, sha256.Sum256(wire)
	dec.request = requestDigest(t, dec.wire)
	return dec, wire, nil
}

// judge applies the refusal rules in order and returns the bytes, the
// basis and the reason (ReasonRaw or ReasonFiltered on success).
func (d *Decider) judge(st *state, t Transmission, now time.Time, dec *Decision) ([]byte, Basis, string) {
	pt, ok := t.Target.(PortalTarget)
	if !ok {
		return nil, nil, ReasonTargetKind
	}
	eff := st.p.effective(pt, t.Purpose)
	// closed-diagnostic-recording has no network transport:
	// its capacity admits local records only, never a transmission.
	if _, ok := st.p.purposes[t.Purpose]; !ok || eff.denied || t.Purpose == DiagnosticRecording {
		return nil, nil, ReasonPurpose
	}
	if reason := st.p.custodyReason(pt); reason != "" {
		return nil, nil, reason
	}
	if reason := judgeHeaders(st, eff, t.Headers); reason != "" {
		return nil, nil, reason
	}
	c, err := classify(st.p, st.src, t.Body, t.JSON)
	if err != nil {
		return nil, nil, ReasonLineage
	}
	dec.influence = c.influence()
	for _, k := range c.categories {
		if eff.nonDecl[k] {
			return nil, nil, ReasonCategory
		}
	}
	switch {
	case c.weight >= eff.forbidden:
		return nil, nil, ReasonForbidden // D-14: no filtered egress either
	case c.weight < eff.portal:
		return t.Body, RawEligible{weight: c.weight, categories: c.categories, target: dec.target,
			purpose: t.Purpose, policy: st.p.revision}, ReasonRaw
	}
	f := filterRun{p: st.p, src: st.src, portal: eff.portal}
	out, ev, ok := f.run(t.Body, t.JSON, now)
	if !ok {
		return nil, nil, ReasonFilterFailed
	}
	return out, ev, ReasonFiltered
}

// Admit verifies dec against the bytes about to be sent, t's target and
// purpose, the current policy and the clock, and then consumes one use
// and len(wire) bytes of the purpose's durable account. It returns nil
// only when the caller may send wire now. A decision admits at most once.
func (d *Decider) Admit(ctx context.Context, dec *Decision, wire []byte, t Transmission) error {
	pc, rec, err := d.check(ctx, dec, wire, t)
	if err != nil {
		return err
	}
	err = d.opts.Ledger.Claim(ctx, string(t.Purpose), Ceiling{Uses: pc.MaxUses, Bytes: pc.MaxBytes}, int64(len(wire)), rec)
	if err != nil {
		return d.refuse(ctx, dec, t.Job, claimReason(err))
	}
	d.admitted(dec, t, rec)
	return nil
}

// check spends dec and verifies it against wire, t and the current
// policy; it returns the purpose's ceilings and the claim's record.
func (d *Decider) check(ctx context.Context, dec *Decision, wire []byte, t Transmission) (PurposeConfig, Record, error) {
	if dec == nil {
		return PurposeConfig{}, Record{}, fault.New(fault.PolicyDenied, ReasonSpent, "no egress decision")
	}
	if !dec.spent.CompareAndSwap(false, true) {
		return PurposeConfig{}, Record{}, d.refuse(ctx, dec, t.Job, ReasonSpent)
	}
	st := d.cur.Load()
	if err := dec.verify(wire, t, st.p.revision, d.opts.Now()); err != nil {
		return PurposeConfig{}, Record{}, d.refuse(ctx, dec, t.Job, fault.From(err).Reason)
	}
	return st.p.purposes[t.Purpose], Record{Reason: dec.reason, Evidence: d.digest(dec, "egress.decision")}, nil
}

// admitted records the event of a committed claim.
func (d *Decider) admitted(dec *Decision, t Transmission, rec Record) {
	d.record(event.Event{Type: event.TypeDecision, Reason: dec.reason, Rule: "egress." + string(t.Purpose),
		IDs: map[string]string{"decision": rec.Evidence}, Detail: joinDetail(t.HeaderRecord(), dec.custody)})
}

// joinDetail joins the non-empty parts of an event's detail with a space.
func joinDetail(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), " ")
}

func claimReason(err error) string {
	switch {
	case errors.Is(err, ErrUsesExhausted):
		return ReasonUsesExhausted
	case errors.Is(err, ErrBytesExhausted):
		return ReasonBytesExhausted
	case errors.Is(err, ErrConfigConflict):
		return ReasonConfigConflict
	}
	return ReasonUnavailable // the ledger failed: fail closed
}

// refuse records the refusal of job's transmission (event and ledger
// record, evidence digest only) within the job's allowance
// (refusallimit.go) and returns its fault, marked EventRecorded or
// EventLimited (detail "event"). It refuses either way.
func (d *Decider) refuse(ctx context.Context, dec *Decision, job, reason string) error {
	ok, carried, rule, dropped := d.refusals.admit(job, dec.purpose, reason)
	d.recordLeftOut(ctx, rule, dropped)
	mark := EventLimited
	if ok {
		d.recordRefusal(ctx, dec, reason, carried)
		mark = EventRecorded
	}
	return fault.New(fault.PolicyDenied, reason, "coagent8 egress policy refused this transmission ("+reason+")").With("event", mark)
}

// recordRefusal writes the event and ledger record of a refusal; both
// carry the count of the job's refusals left out since its previous one.
func (d *Decider) recordRefusal(ctx context.Context, dec *Decision, reason string, carried int) {
	ev := d.digest(dec, "egress.refusal")
	d.opts.Ledger.Append(ctx, Record{Purpose: string(dec.purpose), Effect: "deny", Reason: reason, Evidence: ev, Suppressed: int64(carried)})
	d.record(event.Event{Type: event.TypeRefusal, Code: string(fault.PolicyDenied), Reason: reason,
		Rule: "egress." + string(dec.purpose), IDs: allowance.Carry(map[string]string{"decision": ev}, carried), Detail: dec.custody})
}

func (d *Decider) digest(dec *Decision, class string) string {
	return d.opts.Key.Digest(evidenceDomain(knownPurpose(dec.purpose), class), dec.evidence())
}

// knownPurpose is p, or "unknown" for a purpose the code does not define
// (an evidence domain names defined purposes only).
func knownPurpose(p Purpose) Purpose {
	if !p.valid() {
		return "unknown"
	}
	return p
}

func evidenceDomain(p Purpose, class string) evidence.Domain {
	return evidence.Domain{Consumer: "audit", Purpose: string(p), Class: class, Retention: "local"}
}

func (d *Decider) record(e event.Event) {
	e.Time = d.opts.Now().UTC()
	d.opts.Events.Record(e) // a failing sink must not open the gate
}
