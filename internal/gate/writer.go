package gate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coagent8/coagent8/internal/store"
)

// writer serialises the gate's hot-path writes — admission (with the
// egress claim when the decider joins it) and settlement — on one pinned
// connection. Concurrent BEGIN IMMEDIATEs on several connections of one
// process otherwise meet SQLite's busy handler, which sleeps 1, 2, 5, 10
// ms… between retries: that, not the work, made the gate's p99 (issue 9).
// A Go mutex hands the lock over in microseconds. Other processes (a
// `coagent8 gate revoke`, a second gate) still meet the busy timeout, and
// SQLite's write lock still decides between them.
//
// Checkpoints are moved off the request path too: with SQLite's default
// (wal_autocheckpoint=1000 pages) every few hundred requests one commit
// ran a checkpoint — two fsyncs — while holding the write lock, which was
// the gate's p99. The writer connection checkpoints by itself only past
// walValve pages, a bound for sustained saturation; below it
// [writer.checkpoints] runs PASSIVE checkpoints on another connection,
// without the writer's lock, so commits never wait for them. Durability
// is unchanged: a commit is durable (WAL, synchronous=NORMAL) before and
// after its checkpoint.
//
// The pinned connection's transactions are [store.WriteTx]s: BEGIN
// IMMEDIATE, COMMIT and every statement prepared once on it, no
// database/sql transaction machinery per request (issue 18: the
// admission's BEGIN and COMMIT were a quarter of its CPU time).
type writer struct {
	db    *sql.DB
	mu    sync.Mutex
	conn  *sql.Conn     // nil once closed: writes then use the pool
	pin   *store.Writer // conn's transactions; nil once closed
	dirty atomic.Bool   // a write transaction began since the last checkpoint

	// pending are the settlements waiting for mu (see settle); pmu guards
	// the slice alone, so a settlement queues while mu is held. Only a
	// holder of mu applies or removes entries.
	pmu     sync.Mutex
	pending []*settlement
}

// settlement is one queued settlement write. err is its result once
// done is closed.
type settlement struct {
	fn   func(store.Tx) error
	err  error
	done chan struct{}
}

// walValve is the writer's wal_autocheckpoint (pages of 4 KiB): the WAL
// size at which a commit checkpoints itself, when the background
// checkpoints cannot restart the log because writes never pause.
const walValve = 8192

// sqliteAutocheckpoint is SQLite's default, restored before the
// connection goes back to the shared pool.
const sqliteAutocheckpoint = 1000

// checkpointEvery is the period of the background checkpoint.
const checkpointEvery = 250 * time.Millisecond

func newWriter(ctx context.Context, db *sql.DB) (*writer, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("gate writer connection: %w", err)
	}
	if _, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint=%d", walValve)); err != nil {
		c.Close()
		return nil, fmt.Errorf("gate writer connection: %w", err)
	}
	pin, err := store.NewWriter(ctx, c)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("gate writer connection: %w", err)
	}
	return &writer{db: db, conn: c, pin: pin}, nil
}

// begin locks the writer and starts a write transaction; the caller ends
// the transaction and then calls w.mu.Unlock. On error nothing is held.
func (w *writer) begin(ctx context.Context) (store.Tx, error) {
	w.mu.Lock()
	tx, err := w.open(ctx)
	if err != nil {
		w.mu.Unlock()
		return nil, err
	}
	return tx, nil
}

// open starts a write transaction (BEGIN IMMEDIATE) on the pinned
// connection, or on the pool once it is closed (a settlement after
// Close); mu is held.
func (w *writer) open(ctx context.Context) (store.Tx, error) {
	w.dirty.Store(true)
	if w.pin == nil {
		tx, err := w.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (store DSN)
		if err != nil {
			return nil, fmt.Errorf("begin: %w", err)
		}
		return tx, nil
	}
	tx, err := w.pin.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return tx, nil
}

// write runs fn in a write transaction and commits it when fn returns
// nil. The queued settlements go first into the same transaction (see
// "Grouped settlements"), so fn reads the budgets with them applied.
func (w *writer) write(ctx context.Context, fn func(store.Tx) error) error {
	tx, err := w.begin(ctx)
	if err != nil {
		return err
	}
	defer w.mu.Unlock()
	defer tx.Rollback()
	b, err := w.applyPending(ctx, tx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	w.finish(b)
	return nil
}

// Grouped settlements (issue 18 performance). A settlement used to be a
// write transaction of its own, queued on mu behind the admissions: under
// concurrency every request cost two BEGIN/COMMITs, and both write the
// same grant page. Now a settlement queues its write and waits; whoever
// holds mu next applies every queued settlement inside its own
// transaction: the next admission (before its own claim, so the budget it
// checks already has those reservations released), or the first waiting
// settler for all of them. Each settlement still returns only after the
// transaction holding it committed, so it is durable before its event
// and before Close returns, as before. A batch runs under a savepoint: a
// settlement failing with an error other than errSettled (which changes
// nothing) undoes the whole batch, and each waiting settler then writes
// its own alone, as before.

//
// A settler off the client's path (after the response ended) first waits
// up to settleDelay for such a holder before taking the lock itself: one request after another, the next admission then
// carries the previous settlement, one transaction per request instead
// of two. Nothing that decides waits for a settlement — every holder of
// the lock applies the queued ones before its own statements, so budget
// checks see the reservations released — only readers (`gate inspect`,
// audit) may see a reservation open that long. Close still waits for
// every settlement.

// settleDelay bounds how long a settlement off the client's path (after
// the response ended) waits for another writer's transaction to carry it.
const settleDelay = 2 * time.Millisecond

// errBatch marks a transaction left in an unknown state by a failed
// savepoint statement: it must not commit.
var errBatch = errors.New("settlement batch: savepoint failed")

// settle queues fn and returns its result once a committed write
// transaction applied it: one of another holder of mu that starts within
// carry (0 on the client's path: an error answer waits for its
// settlement), or its own. fn must change nothing when it returns
// errSettled.
func (w *writer) settle(ctx context.Context, carry time.Duration, fn func(store.Tx) error) error {
	s := &settlement{fn: fn, done: make(chan struct{})}
	w.pmu.Lock()
	w.pending = append(w.pending, s)
	w.pmu.Unlock()
	if carry > 0 {
		t := time.NewTimer(carry)
		select {
		case <-s.done: // carried by another writer's transaction
			t.Stop()
			return s.err
		case <-t.C:
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-s.done: // applied with the transaction of the previous holder
		return s.err
	default:
	}
	if w.pin != nil {
		if err := w.settleBatch(ctx); err == nil {
			<-s.done // s was queued before mu was taken: it was in the batch
			return s.err
		}
	}
	w.unqueue(s) // alone, in a transaction of its own
	return w.writeLocked(ctx, fn)
}

// settleBatch applies every queued settlement in one transaction; mu is
// held.
func (w *writer) settleBatch(ctx context.Context) error {
	tx, err := w.open(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	b, err := w.applyPending(ctx, tx)
	if err != nil {
		return err
	}
	if b.n == 0 {
		return errBatch
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	w.finish(b)
	return nil
}

// batch is what applyPending applied; finish releases its settlers.
type batch struct {
	n    int // the first n queued settlements
	errs []error
}

// applyPending applies the queued settlements inside tx (mu is held) and
// returns them for [writer.finish] after tx commits. Only a transaction
// of the pinned connection carries them (after Close each settler writes
// alone). On a settlement's failure it undoes them all (n = 0, nil error:
// they stay queued); an error means tx ended or is in an unknown state
// and must be rolled back.
func (w *writer) applyPending(ctx context.Context, tx store.Tx) (batch, error) {
	wt, ok := tx.(*store.WriteTx)
	if !ok {
		return batch{}, nil
	}
	w.pmu.Lock()
	queued := slices.Clone(w.pending)
	w.pmu.Unlock()
	if len(queued) == 0 {
		return batch{}, nil
	}
	errs := make([]error, len(queued))
	err := wt.Savepoint(ctx, func() error {
		for i, s := range queued {
			if errs[i] = s.fn(wt); errs[i] != nil && !errors.Is(errs[i], errSettled) {
				return errs[i]
			}
		}
		return nil
	})
	switch {
	case wt.Err() != nil:
		return batch{}, errBatch
	case err != nil:
		return batch{}, nil // undone
	}
	return batch{n: len(queued), errs: errs}, nil
}

// finish releases the settlers of b, whose transaction committed; mu is
// held. They are the first b.n queued: only holders of mu remove
// entries, and new ones are appended.
func (w *writer) finish(b batch) {
	if b.n == 0 {
		return
	}
	w.pmu.Lock()
	done := w.pending[:b.n]
	w.pending = slices.Clone(w.pending[b.n:])
	w.pmu.Unlock()
	for i, s := range done {
		s.err = b.errs[i]
		close(s.done)
	}
}

// unqueue removes s from the queue; mu is held.
func (w *writer) unqueue(s *settlement) {
	w.pmu.Lock()
	defer w.pmu.Unlock()
	if i := slices.Index(w.pending, s); i >= 0 {
		w.pending = slices.Delete(w.pending, i, i+1)
	}
}

// writeLocked is [writer.write] with mu already held.
func (w *writer) writeLocked(ctx context.Context, fn func(store.Tx) error) error {
	tx, err := w.open(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// checkpoints runs a PASSIVE checkpoint every checkpointEvery when
// anything was written since the last one, until ctx ends. It has its
// own goroutine: a slow fsync must not delay the revocation sweep. A
// failed checkpoint leaves the frames for the next one.
func (w *writer) checkpoints(ctx context.Context) {
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if w.dirty.Swap(false) {
				w.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
			}
		}
	}
}

// close restores the connection's default and returns it to the pool;
// later writes (a stream that outlives [Gate.Close]) use the pool.
func (w *writer) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn == nil {
		return nil
	}
	err := w.pin.Close()
	w.conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA wal_autocheckpoint=%d", sqliteAutocheckpoint))
	err = errors.Join(err, w.conn.Close())
	w.conn, w.pin = nil, nil
	return err
}
