package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// Writer runs write transactions ([WriteTx]) on one connection pinned for
// a process's hot-path writer, one at a time: [Writer.Begin] waits until
// the previous transaction ended.
//
// It exists for latency (issue 18: the provider gate's admission is one
// write transaction before the first upstream byte). A *sql.Tx costs a
// connection grab, a context-watching goroutine, a parse of BEGIN
// IMMEDIATE and COMMIT on every transaction, a rebind of each pool
// statement and, in the driver, a goroutine per statement watching a
// cancellable context. A Writer prepares BEGIN IMMEDIATE, COMMIT,
// ROLLBACK and each statement it runs once on its connection, and begins
// and ends transactions by hand.
//
// Durability is the store's: a committed WriteTx is exactly a committed
// *sql.Tx (same connection settings, same COMMIT). Other connections and
// processes still serialise with it through SQLite's write lock and busy
// timeout.
type Writer struct {
	mu     sync.Mutex // held from Begin until the transaction ends
	conn   *sql.Conn
	ctl    ctl
	stmts  map[string]*sql.Stmt // prepared on conn; used by the holder of mu
	ended  *sql.Tx              // an ended transaction (see WriteTx.QueryRowContext)
	closed bool
}

// ctl are the transaction-control statements, prepared on the connection.
type ctl struct {
	begin, commit, rollback *sql.Stmt
}

// maxStmts bounds a Writer's prepared statements. Statements past it run
// unprepared: the hot statements are code constants and come first, a
// query built at run time must not grow the cache without bound.
const maxStmts = 64

// ErrWriterClosed is returned by [Writer.Begin] after [Writer.Close].
var ErrWriterClosed = errors.New("store: writer is closed")

// NewWriter prepares the transaction statements on c, a connection of a
// database opened by [Open] (in autocommit mode: no transaction open). c
// stays the caller's: close it after [Writer.Close]; meanwhile use it
// only between transactions and never to begin one.
func NewWriter(ctx context.Context, c *sql.Conn) (*Writer, error) {
	w := &Writer{conn: c, stmts: make(map[string]*sql.Stmt)}
	for _, p := range []struct {
		dst **sql.Stmt
		q   string
	}{{&w.ctl.begin, "BEGIN IMMEDIATE"}, {&w.ctl.commit, "COMMIT"}, {&w.ctl.rollback, "ROLLBACK"}} {
		st, err := c.PrepareContext(ctx, p.q)
		if err != nil {
			w.closeStmts()
			return nil, fmt.Errorf("prepare writer: %w", err)
		}
		*p.dst = st
	}
	// A deferred, read-only BEGIN takes no lock; the ended transaction
	// gives the *sql.Row of ErrTxDone that WriteTx.QueryRowContext returns
	// after the end (database/sql has no other way to make one).
	ended, err := c.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		w.closeStmts()
		return nil, fmt.Errorf("prepare writer: %w", err)
	}
	ended.Rollback()
	w.ended = ended
	return w, nil
}

// Begin waits for the previous transaction to end, then starts a write
// transaction (BEGIN IMMEDIATE: it holds the database's write lock from
// here, as the store's *sql.Tx do). ctx bounds the wait for a lock held
// by another connection or process, and is checked before each statement
// and before COMMIT: once it is done the transaction rolls back, as a
// *sql.Tx does. Errors: [ErrWriterClosed], or BEGIN's (then nothing is
// held).
func (w *Writer) Begin(ctx context.Context) (*WriteTx, error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil, ErrWriterClosed
	}
	if _, err := w.ctl.begin.ExecContext(ctx); err != nil {
		// The driver may report a BEGIN that took effect as failed (ctx
		// ended meanwhile): never leave the connection in a transaction.
		w.ctl.rollback.ExecContext(context.Background())
		w.mu.Unlock()
		return nil, fmt.Errorf("begin: %w", err)
	}
	return &WriteTx{w: w, ctx: ctx}, nil
}

// Close waits for the transaction in progress to end and releases the
// writer's statements; later Begins return [ErrWriterClosed]. The
// connection stays open (it is the caller's).
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return w.closeStmts()
}

func (w *Writer) closeStmts() error {
	var errs []error
	for _, st := range []*sql.Stmt{w.ctl.begin, w.ctl.commit, w.ctl.rollback} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	for q, st := range w.stmts {
		errs = append(errs, st.Close())
		delete(w.stmts, q)
	}
	return errors.Join(errs...)
}

// prepared returns query prepared on the connection, preparing it on
// first use; nil when the cache is full (run it unprepared). The caller
// holds mu through its transaction.
func (w *Writer) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := w.stmts[query]; ok {
		return st, nil
	}
	if len(w.stmts) >= maxStmts {
		return nil, nil
	}
	st, err := w.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	w.stmts[query] = st
	return st, nil
}
