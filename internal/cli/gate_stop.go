package cli

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// stopGrace is how long `gate serve`, told to stop (SIGINT, SIGTERM),
// lets the exchanges in flight finish before it cuts them.
const stopGrace = 5 * time.Second

// inflight counts the exchanges a serving gate is handling, so that the
// gate closes only after each returned: a settlement begun after the
// gate's Close would meet a closed database, and the attempt stayed open
// until the orphan reconciliation an hour after its grant expired (red
// team 2026-12-02: the server was stopped with Close alone).
type inflight struct {
	h        http.Handler
	mu       sync.Mutex
	stopping bool
	wg       sync.WaitGroup
}

func newInflight(h http.Handler) *inflight { return &inflight{h: h} }

// ServeHTTP serves r, or refuses it 503 (reason gate.stopping) once the
// gate is stopping: a request on a connection kept alive past the stop.
func (f *inflight) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if f.stopping {
		f.mu.Unlock()
		w.Header().Set("X-Coagent8-Gate-Reason", "gate.stopping")
		http.Error(w, "coagent8 gate is stopping", http.StatusServiceUnavailable)
		return
	}
	f.wg.Add(1) // under mu, before wait can begin: see wait
	f.mu.Unlock()
	defer f.wg.Done()
	f.h.ServeHTTP(w, r)
}

// wait refuses new exchanges and returns when every one in flight has
// returned.
func (f *inflight) wait() {
	f.mu.Lock()
	f.stopping = true
	f.mu.Unlock()
	f.wg.Wait()
}

// stopServing stops srv: no new connections, stopGrace for the exchanges
// in flight to end on their own, then their connections are cut (each
// exchange then settles as the gate settles a lost client: uncertain,
// charged in full unless the usage arrived); it returns when every
// handler has returned.
func stopServing(srv *http.Server, f *inflight) {
	ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	if srv.Shutdown(ctx) != nil {
		srv.Close()
	}
	f.wait()
}
