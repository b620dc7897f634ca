package gate

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/store"
)

// TestCheckpointsOffRequestPath: the writer connection checkpoints by
// itself only past walValve pages, and the watcher's background
// checkpoint picks up what a request wrote.
func TestCheckpointsOffRequestPath(t *testing.T) {
	f := newFixture(t, nil)
	w := f.gate.ledger.w
	var n int
	if err := w.conn.QueryRowContext(context.Background(), "PRAGMA wal_autocheckpoint").Scan(&n); err != nil || n != walValve {
		t.Errorf("writer wal_autocheckpoint %d (err %v), want %d", n, err, walValve)
	}
	gr, phantom := f.grant(spec(Anthropic))
	readAll(t, f.call(Anthropic, phantom, gr.Model, true))
	f.settled(gr.ID)
	deadline := time.Now().Add(5 * time.Second)
	for w.dirty.Load() {
		if time.Now().After(deadline) {
			t.Fatal("no background checkpoint after the request's writes")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSettlesAfterClose: a stream in flight when Close is called ends
// within Close's grace and is settled from its usage before Close
// returns.
func TestSettlesAfterClose(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Chunks: 10, ChunkDelay: 20 * time.Millisecond, InputTokens: 300, OutputTokens: 200})
	gr, phantom := f.grant(spec(Anthropic))
	resp := f.call(Anthropic, phantom, gr.Model, true)
	br := firstEvent(t, resp)
	if err := f.gate.Close(); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, br)
	resp.Body.Close()
	if got := f.settled(gr.ID); got.Used.Tokens != 500 || got.Reserved != (Counters{}) {
		t.Errorf("after Close: used %+v reserved %+v, want 500 tokens settled", got.Used, got.Reserved)
	}
}

// queueSettlements starts n settlers on w while the test holds w.mu, each
// inserting one row into table t, and waits until all are queued. It
// returns their results' channel.
func queueSettlements(t *testing.T, w *writer, n int, fn func(i int) func(store.Tx) error) chan error {
	t.Helper()
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- w.settle(context.Background(), settleDelay, fn(i)) }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.pmu.Lock()
		k := len(w.pending)
		w.pmu.Unlock()
		if k == n {
			return errs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d settlements queued", k, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSettlementsJoinNextTransaction: settlements queued while the writer
// is busy are applied, each exactly once, inside the next holder's
// transaction (an admission's, here simulated), and their settlers return
// only after it committed (issue 18 performance: grouped settlements).
func TestSettlementsJoinNextTransaction(t *testing.T) {
	f := newFixture(t, nil)
	w, ctx := f.gate.ledger.w, context.Background()
	if _, err := w.conn.ExecContext(ctx, `CREATE TABLE settle_probe (i INTEGER PRIMARY KEY, tx INTEGER)`); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	w.mu.Lock()
	errs := queueSettlements(t, w, 3, func(i int) func(store.Tx) error {
		return func(tx store.Tx) error {
			calls.Add(1)
			_, err := tx.ExecContext(ctx, `INSERT INTO settle_probe VALUES (?, 1)`, i)
			return err
		}
	})
	tx, err := w.pin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.applyPending(ctx, tx)
	if err != nil || b.n != 3 {
		t.Fatalf("applyPending = %d, %v; want 3, nil", b.n, err)
	}
	select {
	case err := <-errs:
		t.Fatalf("a settler returned (%v) before the transaction committed", err)
	default:
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	w.finish(b)
	w.mu.Unlock()
	for range 3 {
		if err := <-errs; err != nil {
			t.Errorf("settle: %v", err)
		}
	}
	var rows int
	f.db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM settle_probe`).Scan(&rows)
	if got, want := [2]int64{calls.Load(), int64(rows)}, [2]int64{3, 3}; got != want {
		t.Errorf("calls, rows = %v, want %v (each settlement applied once, in the admission's transaction)", got, want)
	}
}

// TestSettlementBatchFailureIsolated: a settlement failing in a batch
// undoes the batch (its partial write too), and every settler then
// writes alone: the others succeed, the failing one gets its own error.
func TestSettlementBatchFailureIsolated(t *testing.T) {
	f := newFixture(t, nil)
	w, ctx := f.gate.ledger.w, context.Background()
	if _, err := w.conn.ExecContext(ctx, `CREATE TABLE settle_probe (i INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	w.mu.Lock()
	errs := queueSettlements(t, w, 3, func(i int) func(store.Tx) error {
		return func(tx store.Tx) error {
			id := i
			if i == 1 {
				id = 11
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO settle_probe VALUES (?)`, id); err != nil {
				return err
			}
			if i == 1 {
				return boom // after a write: the savepoint must undo it
			}
			return nil
		}
	})
	w.mu.Unlock() // the settlers batch, fail, and fall back to one transaction each
	var got []error
	for range 3 {
		got = append(got, <-errs)
	}
	failed := 0
	for _, err := range got {
		switch {
		case errors.Is(err, boom):
			failed++
		case err != nil:
			t.Errorf("settle: %v", err)
		}
	}
	var ids []int
	rs, err := f.db.SQL().QueryContext(ctx, `SELECT i FROM settle_probe ORDER BY i`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var i int
		rs.Scan(&i)
		ids = append(ids, i)
	}
	rs.Close()
	if diff := cmp.Diff([]int{0, 2}, ids); failed != 1 || diff != "" {
		t.Errorf("failed = %d (want 1); rows (-want +got):\n%s", failed, diff)
	}
}

// TestGroupedSettlementsExact: 64 concurrent streamed requests, whose
// settlements group with each other and with admissions, leave the grant
// exactly charged: every request counted, nothing left reserved, every
// attempt completed and charged its usage (issue 18 performance: grouping
// must keep budgets exact).
func TestGroupedSettlementsExact(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Chunks: 3, InputTokens: 300, OutputTokens: 200})
	s := spec(Anthropic)
	gr, phantom := f.grant(s)
	const n = 64
	var wg sync.WaitGroup
	var ok atomic.Int64
	for range n {
		wg.Go(func() {
			resp := f.call(Anthropic, phantom, s.Model, true)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	g := f.settled(gr.ID)
	one := cost(300, s.Price.InputPerMTok) + cost(200, s.Price.OutputPerMTok)
	want := Counters{Requests: n, Tokens: n * 500, Spend: NanoUSD(n) * one}
	if diff := cmp.Diff(want, g.Used); ok.Load() != n || diff != "" {
		t.Errorf("%d of %d answered; used (-want +got):\n%s", ok.Load(), n, diff)
	}
	if g.Reserved != (Counters{}) {
		t.Errorf("still reserved %+v", g.Reserved)
	}
	as := attempts(t, f, gr.ID)
	for _, a := range as {
		if a.State != AttemptCompleted {
			t.Errorf("attempt %+v, want completed", a)
		}
	}
}

// TestCloseCutsExchangesPastGrace: Close lets a stream run for its grace,
// then cuts it; the attempt is settled uncertain (charged its full
// reservation: no usage arrived) before Close returns.
func TestCloseCutsExchangesPastGrace(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.CloseGrace = 100 * time.Millisecond })
	f.anth.Script(providertest.Reply{Chunks: 50, ChunkDelay: 100 * time.Millisecond, InputTokens: 300, OutputTokens: 200})
	gr, phantom := f.grant(spec(Anthropic))
	resp := f.call(Anthropic, phantom, gr.Model, true)
	defer resp.Body.Close()
	br := firstEvent(t, resp)
	go io.Copy(io.Discard, br) // a client still reading
	start := time.Now()
	if err := f.gate.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Close took %v with a 100 ms grace", took)
	}
	as := attempts(t, f, gr.ID)
	if len(as) != 1 || as[0].State != AttemptUncertain || as[0].Charged != as[0].Reserved {
		t.Errorf("attempts after Close = %+v, want one uncertain, charged its reservation", as)
	}
}
