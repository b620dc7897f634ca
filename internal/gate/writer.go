package gate

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
)

// writer serialises the gate's hot-path writes — admission (with the
// egress claim when the decider joins it) and settlement — on one pinned
// connection. Concurrent BEGIN IMMEDIATEs on several connections of one
// process otherwise meet SQLite's busy handler, which sleeps 1, 2, 5, 10
// ms… between retries: that, not the work, made the gate's p99 (issue 9).
// A Go mutex hands the lock over in microseconds. Other processes (a
// `coagent8 gate revoke`, a second gate) still meet the busy timeout.
//
// Checkpoints are moved off the request path too: with SQLite's default
// (wal_autocheckpoint=1000 pages) every few hundred requests one commit
// ran a checkpoint — two fsyncs — while holding the write lock, which was
// the gate's p99. The writer connection checkpoints automatically only
// past walValve pages, a bound for sustained saturation; below it
// [ledger.checkpoint] runs a PASSIVE checkpoint from the watcher on
// another connection, without the writer's lock, so commits never wait
// for it. Durability is unchanged: a commit is durable (WAL,
// synchronous=NORMAL) before and after its checkpoint.
type writer struct {
	mu    sync.Mutex
	conn  *sql.Conn
	dirty atomic.Bool // a write transaction began since the last checkpoint
}

// walValve is the writer's wal_autocheckpoint (pages of 4 KiB): the WAL
// size at which a commit checkpoints itself, when the background
// checkpoints cannot restart the log because writes never pause.
const walValve = 8192

// sqliteAutocheckpoint is SQLite's default, restored before the
// connection goes back to the shared pool.
const sqliteAutocheckpoint = 1000

func newWriter(ctx context.Context, db *sql.DB) (*writer, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("gate writer connection: %w", err)
	}
	if _, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint=%d", walValve)); err != nil {
		c.Close()
		return nil, fmt.Errorf("gate writer connection: %w", err)
	}
	return &writer{conn: c}, nil
}

// begin locks the writer and starts a write transaction; the caller ends
// the transaction and then calls w.mu.Unlock. On error nothing is held.
func (w *writer) begin(ctx context.Context) (*sql.Tx, error) {
	w.mu.Lock()
	w.dirty.Store(true)
	tx, err := w.conn.BeginTx(ctx, nil) // BEGIN IMMEDIATE (store DSN)
	if err != nil {
		w.mu.Unlock()
		return nil, fmt.Errorf("begin: %w", err)
	}
	return tx, nil
}

// write runs fn in a write transaction and commits it when fn returns nil.
func (w *writer) write(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := w.begin(ctx)
	if err != nil {
		return err
	}
	defer w.mu.Unlock()
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// checkpoint runs a PASSIVE checkpoint on db (not the writer connection,
// and without its lock) when anything was written since the last one. It
// is best effort: a failure leaves the frames for the next one.
func (w *writer) checkpoint(ctx context.Context, db *sql.DB) {
	if w.dirty.Swap(false) {
		db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
	}
}

// close restores the connection's default and returns it to the pool.
func (w *writer) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA wal_autocheckpoint=%d", sqliteAutocheckpoint))
	return w.conn.Close()
}
