package gate

import (
	"context"
	"errors"
	"io"
	"log"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/crash"
)

var discardLog = log.New(io.Discard, "", 0)

// meteredBody passes an upstream body through to the client while the
// meter watches it, and settles the reservation exactly once.
type meteredBody struct {
	rc   io.ReadCloser
	g    *Gate
	a    *admission
	m    meter
	eof  bool
	lost bool // upstream failed mid-body (not a cut of the gate's own)
	once sync.Once
}

func (b *meteredBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.m.write(p[:n])
	switch {
	case err == io.EOF:
		b.eof = true
	case err != nil && b.a.ctx.Err() == nil:
		b.lost = true
	}
	return n, err
}

// Close is called by the proxy when the copy ends: at EOF, on a cut, or
// when the client went away. In the last case the provider still bills the
// whole generation, so the gate keeps reading to the usage report in the
// background (bounded by MaxDrains and DrainTimeout).
func (b *meteredBody) Close() error {
	if b.eof || b.a.ctx.Err() != nil || b.m.final {
		b.finish()
		return nil
	}
	select {
	case b.g.drains <- struct{}{}:
		go b.drain()
	default:
		b.finish() // too many drains: charge the reservation now
	}
	return nil
}

func (b *meteredBody) drain() {
	defer func() { <-b.g.drains }()
	// A panic while draining settles the exchange as any lost drain:
	// charged its reservation (finish runs once).
	defer crash.Stderr.Recover("gate drain", func(error) { b.finish() })
	t := time.AfterFunc(b.g.opts.DrainTimeout, func() { b.a.flight.cancel(errors.New("drain timeout")) })
	defer t.Stop()
	buf := make([]byte, 32<<10)
	for { // to EOF, not just the usage event, so the connection is reusable
		if _, err := b.Read(buf); err != nil {
			break
		}
	}
	b.finish()
}

// finish closes upstream and settles: the provider's terminal usage when
// seen, else the full reservation.
func (b *meteredBody) finish() {
	b.once.Do(func() {
		b.rc.Close()
		b.m.close()
		charge, out := b.charge()
		// Settle off the client's path: after the handler returned, so the
		// write does not compete with the end of the response for the CPU
		// (issue 9 benchmark: ~45 µs at p50 on two cores). The reservation
		// keeps holding the budget until then, which only errs on the side
		// of denying; the settlement event follows the durable write.
		// Counted before the flight ends: Close waits for the flights,
		// then for the settlements.
		b.g.settling.Add(1)
		b.a.done()
		go func() {
			defer b.g.settling.Done()
			// A panic in one settlement leaves its attempt sent (the
			// orphan reconciliation charges it), not the process.
			defer crash.Stderr.Recover("gate settlement", nil)
			<-b.a.served
			b.g.settleWithin(b.a, charge, out, settleDelay)
		}()
	})
}

func (b *meteredBody) charge() (Amount, Outcome) {
	a := b.a
	if !a.route.Metered {
		return Amount{}, OutcomeUsage
	}
	if a.withheld.Load() {
		return a.reserved, OutcomeWithheld
	}
	if b.m.reported() {
		u := b.m.usage
		amt := Amount{Tokens: u.Tokens(), Spend: u.Cost(a.grant.Price)}
		if amt.Tokens > a.reserved.Tokens || amt.Spend > a.reserved.Spend {
			return amt, OutcomeOverdrawn
		}
		return amt, OutcomeUsage
	}
	if errors.Is(context.Cause(a.ctx), errCut) || a.ctx.Err() != nil {
		return a.reserved, OutcomeCut
	}
	if b.lost {
		return a.reserved, OutcomeLost // uncertain: no usage arrived to reconcile it
	}
	return a.reserved, OutcomeNoUsage
}
