package gate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"net/http"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/store"
)

// EgressDecider settles the egress decision of one transmission before
// its first byte (issue 10; [egress.Decider] implements it). Seal returns
// the exact bytes to forward — the body as sent or the privacy-filtered
// candidate — after consuming the disclosure budget, or a *fault.Error
// whose Reason is the denial reason.
//
// A decider that also has the methods Joins(*sql.DB) bool and SealJoint
// of [egress.Decider], and joins the gate's database, has its disclosure
// claim made in the same write transaction as the gate's budget
// reservation (issue 9): a refusal by either consumes nothing of both.
type EgressDecider interface {
	Seal(ctx context.Context, t egress.Transmission) ([]byte, error)
}

// jointDecider is a decider whose claim can share the gate's transaction.
type jointDecider interface {
	Joins(db *sql.DB) bool
	SealJoint(ctx context.Context, t egress.Transmission, begin egress.Begin, joint egress.Joint) ([]byte, error)
}

var (
	_ EgressDecider = (*egress.Decider)(nil)
	_ jointDecider  = (*egress.Decider)(nil)
)

// ErrNoEgressDecider is why [New] refuses Options without Egress: the
// gate has no mode that forwards a body without an egress decision.
var ErrNoEgressDecider = errors.New("gate: no egress decider")

// decideAndReserve runs the egress decision of an admitted request —
// every transmission, a retry included, gets its own; a bodiless one (GET
// /v1/models) too, since its query and forwarded headers (Accept) leave
// with it — and reserves the budget for the sealed bytes.
func (g *Gate) decideAndReserve(r *http.Request, a *admission) string {
	ctx := r.Context()
	t := g.transmission(r, a)
	if g.joint != nil {
		return g.sealJoint(ctx, t, a)
	}
	out, err := g.opts.Egress.Seal(ctx, t)
	if reason := egressReason(err); reason != "" {
		a.egressRecorded, a.egressLimited = recorded(err), limited(err)
		return reason
	}
	if reason := g.sized(a, out); reason != "" {
		return reason
	}
	return g.reserve(ctx, a)
}

// sealJoint makes the egress claim and the budget reservation in one
// write transaction on the gate's writer.
func (g *Gate) sealJoint(ctx context.Context, t egress.Transmission, a *admission) string {
	held := false
	defer func() {
		if held {
			g.ledger.w.mu.Unlock()
		}
	}()
	// The queued settlements go first into this transaction (writer.go,
	// "Grouped settlements"): the budget checked below has their
	// reservations released, and they commit only with this admission;
	// if it is refused they stay queued for their own settlers.
	var settled batch
	begin := func(ctx context.Context) (store.Tx, error) {
		w := g.ledger.w
		tx, err := w.begin(ctx)
		if err != nil {
			return nil, err
		}
		if settled, err = w.applyPending(ctx, tx); err != nil {
			tx.Rollback()
			w.mu.Unlock()
			return nil, err
		}
		held = true
		return tx, nil
	}
	var refused string
	joint := func(ctx context.Context, tx store.Tx, wire []byte, decision string) error {
		if refused = g.sized(a, wire); refused != "" {
			return errRefused // rolls the egress claim back too
		}
		a.decision = decision
		if refused = g.reserveIn(ctx, tx, a); refused != "" {
			return errRefused // rolls the egress claim back too
		}
		return nil
	}
	_, err := g.joint.SealJoint(ctx, t, begin, joint)
	if err != nil {
		a.rid = 0 // rolled back with the claim
	} else {
		g.ledger.w.finish(settled) // committed with the admission
	}
	if refused != "" {
		return refused
	}
	a.egressRecorded, a.egressLimited = recorded(err), limited(err)
	return egressReason(err)
}

// recorded reports whether the decider accounted for the security event
// of its refusal err itself: recorded it, or left it out within the job's
// allowance of refusal records and counted it ([egress.Decider] marks it
// "event": [egress.EventRecorded] or [egress.EventLimited]). A second
// event of the gate's would undo that limit.
func recorded(err error) bool {
	mark := eventMark(err)
	return mark == egress.EventRecorded || mark == egress.EventLimited
}

// limited reports whether the decider left the record of its refusal err
// out, within the job's allowance ([egress.EventLimited]).
func limited(err error) bool { return eventMark(err) == egress.EventLimited }

// eventMark is the decider's "event" mark of its refusal err, or "".
func eventMark(err error) string {
	var fe *fault.Error
	if !errors.As(err, &fe) {
		return ""
	}
	return fe.Details["event"]
}

// refusalFlusher is a decider that limits its refusal records per job
// and records what it left out when asked ([egress.Decider]).
type refusalFlusher interface {
	FlushRefusals(ctx context.Context, job string)
	FlushAllRefusals(ctx context.Context)
}

var _ refusalFlusher = (*egress.Decider)(nil)

// flushRefusals has the decider record what it left out of job's refusal
// records (every job's when job is nil).
func (g *Gate) flushRefusals(job *string) {
	f, ok := g.opts.Egress.(refusalFlusher)
	switch {
	case !ok:
	case job == nil:
		f.FlushAllRefusals(context.Background())
	default:
		f.FlushRefusals(context.Background(), *job)
	}
}

// transmission describes a's body for the egress decision.
func (g *Gate) transmission(r *http.Request, a *admission) egress.Transmission {
	target := a.route.Path
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	return egress.Transmission{Job: a.grant.Job, Purpose: egress.ProviderRequest, Method: r.Method,
		Headers: a.wire.forward, Dropped: a.wire.dropped, JSON: a.body != nil, Body: a.body, Target: egress.PortalTarget{Provider: string(a.route.Provider), Operation: a.route.Path,
			Model: a.grant.Model, Origin: g.origins[a.route.Provider], RequestTarget: target,
			Intermediaries: g.hops[a.route.Provider], CustodyRoute: g.custody[a.route.Provider]}}
}

// egressReason is the denial reason of a decider error ("" for nil).
func egressReason(err error) string {
	var fe *fault.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &fe):
		return fe.Reason
	}
	return "egress.unavailable"
}

// sized makes out the body to forward and recomputes the reservation
// when the decider filtered it. The filter rewrites raw bytes wherever a
// label's pattern matches, so a filtered body must still name the model
// the grant binds and the output limit admission read: otherwise the
// provider would run, and bill, what the gate neither bound nor reserved
// for, and must pass bind's content checks too (egress.filter_binding).
func (g *Gate) sized(a *admission, out []byte) string {
	if !bytes.Equal(out, a.body) {
		now, err := parseBody(out)
		if err != nil || !now.sameMetering(a.parsed) {
			return ReasonFilterBinding
		}
		if reason, _ := reachesBeyond(a.route.Provider, now, out); reason != "" {
			return ReasonFilterBinding
		}
		a.reserved = reservation(len(out), now.outputLimit(a.route.Provider, a.grant.Ceiling), a.grant.Price)
		a.parsed = now
	}
	a.body = out
	return ""
}

// custodyRoute is the digest of the custody route to origin: the gate,
// then each configured intermediary, then the origin, length-prefixed.
func custodyRoute(intermediaries []string, origin string) []byte {
	h := sha256.New()
	for _, hop := range append(append([]string{"coagent8 custody v1", "coagent8-gate"}, intermediaries...), origin) {
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(hop))))
		h.Write([]byte(hop))
	}
	return h.Sum(nil)
}
