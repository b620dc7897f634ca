package gate

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
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
type writer struct {
	db    *sql.DB
	mu    sync.Mutex
	conn  *sql.Conn   // nil once closed: writes then use the pool
	dirty atomic.Bool // a write transaction began since the last checkpoint
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
	return &writer{db: db, conn: c}, nil
}

// begin locks the writer and starts a write transaction; the caller ends
// the transaction and then calls w.mu.Unlock. On error nothing is held.
func (w *writer) begin(ctx context.Context) (*sql.Tx, error) {
	w.mu.Lock()
	w.dirty.Store(true)
	var tx *sql.Tx
	var err error
	if w.conn != nil {
		tx, err = w.conn.BeginTx(ctx, nil) // BEGIN IMMEDIATE (store DSN)
	} else {
		tx, err = w.db.BeginTx(ctx, nil) // a settlement after Close
	}
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
	w.conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA wal_autocheckpoint=%d", sqliteAutocheckpoint))
	err := w.conn.Close()
	w.conn = nil
	return err
}
