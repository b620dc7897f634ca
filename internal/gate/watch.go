package gate

import (
	"context"
	"errors"
	"time"

	"github.com/coagent8/coagent8/internal/crash"
)

// flight is one forwarded exchange whose stream can be cut.
type flight struct {
	grant  string
	cancel context.CancelCauseFunc
}

// errCut is the cancellation cause of a stream cut by revocation, expiry or
// settlement of its grant.
var errCut = errors.New("grant no longer live")

// addFlight registers f, so a later cut reaches it, and reports whether
// this gate cut any grant since epoch (see [Gate.cutEpoch]).
func (g *Gate) addFlight(f *flight, epoch uint64) (cutSince bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	set := g.flights[f.grant]
	if set == nil {
		set = map[*flight]struct{}{}
		g.flights[f.grant] = set
	}
	set[f] = struct{}{}
	return g.cuts != epoch
}

// cutEpoch returns the count of cuts so far. An admission reads it before
// its reservation: a cut between the reservation and the flight's
// registration found no flight to cancel, so [Gate.addFlight] reports it
// and the admission re-reads its grant (red team 3: a request reserved
// just before RevokeJob was sent upstream after it returned).
func (g *Gate) cutEpoch() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cuts
}

func (g *Gate) dropFlight(f *flight) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.flights[f.grant], f)
	if len(g.flights[f.grant]) == 0 {
		delete(g.flights, f.grant)
	}
}

// cutGrant cancels every stream of grant id.
func (g *Gate) cutGrant(id string, cause error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cuts++
	for f := range g.flights[id] {
		f.cancel(errors.Join(errCut, cause))
	}
}

// cutWait bounds how long Close waits for the exchanges it cut (a cut
// ends the upstream request at once).
const cutWait = 5 * time.Second

// cutAll cancels every stream and drain in flight.
func (g *Gate) cutAll(cause error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cuts++
	for _, set := range g.flights {
		for f := range set {
			f.cancel(errors.Join(errCut, cause))
		}
	}
}

// waitFlights reports whether no exchange is in flight, waiting up to max
// for it. Polled: it runs at Close only.
func (g *Gate) waitFlights(max time.Duration) bool {
	for deadline := time.Now().Add(max); ; time.Sleep(5 * time.Millisecond) {
		g.mu.Lock()
		n := len(g.flights)
		g.mu.Unlock()
		if n == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// watch re-reads, every WatchInterval, the grants that have streams in
// flight and cuts those no longer live: revocation by another process
// (coagent8 gate revoke) thus takes effect within about one interval
// (notes/gate.md §5: no cached "valid" outlives one request).
func (g *Gate) watch(ctx context.Context) {
	defer close(g.done)
	t := time.NewTicker(g.opts.WatchInterval)
	defer t.Stop()
	r := time.NewTicker(reconcileEvery)
	defer r.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.C:
			// A failure leaves them for the next tick; so does a panic,
			// and the watcher keeps cutting revoked and expired grants.
			crash.Stderr.Do("gate reconciliation", func() { g.ReconcileOrphans(ctx) }, nil)
		case <-t.C:
			crash.Stderr.Do("gate watch", func() { g.sweep(ctx); g.flushSent(ctx); g.flushEnded(ctx) }, nil)
		}
	}
}

func (g *Gate) sweep(ctx context.Context) {
	g.mu.Lock()
	ids := make([]string, 0, len(g.flights))
	for id := range g.flights {
		ids = append(ids, id)
	}
	g.mu.Unlock()
	for _, id := range ids {
		live, err := g.ledger.stillLive(ctx, nil, id, g.opts.Now())
		if err == nil && !live {
			g.cutGrant(id, errors.New("revoked or expired"))
		}
	}
}
