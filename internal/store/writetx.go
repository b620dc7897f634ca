package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// WriteTx is one transaction of a [Writer] ([Writer.Begin]); it
// implements [Tx]. It is safe for concurrent use; its statements run one
// at a time.
//
// A failed statement — an ExecContext or QueryContext error, or its
// context done before it ran — rolls the transaction back at once and
// ends it (inside [WriteTx.Savepoint], it is undone to the savepoint
// instead). So no statement ever runs after SQLite rolled a transaction
// back by itself (SQLITE_FULL, SQLITE_IOERR…), when it would commit on
// its own. After the end — Commit, Rollback or a failure — every call
// returns a [*TxError] and nothing runs on the connection, which may
// carry the Writer's next transaction by then.
//
// Statements run with ctx's values but are not interrupted once started:
// ctx is checked before each. They are the writer's short hot-path
// statements; the wait that can be long, for another process's lock, is
// BEGIN's, and that one ends with Begin's context.
type WriteTx struct {
	w   *Writer
	ctx context.Context // Begin's

	mu     sync.Mutex
	ended  *TxError // why no statement runs any more; nil while open
	failed error    // a statement failed inside a savepoint (still open)
	depth  int      // open savepoints
}

// TxError is a [WriteTx] call refused because the transaction ended, or
// a commit that failed (then the transaction was rolled back).
// errors.Is(err, sql.ErrTxDone) reports true, as for a *sql.Tx.
type TxError struct {
	Op     string // the refused call: "exec", "query", "commit", "rollback", "savepoint"
	Reason string // TxCommitted, TxRolledBack or TxFailed
	Cause  error  // for TxFailed, the error that rolled the transaction back
}

// TxError reasons.
const (
	TxCommitted  = "committed"
	TxRolledBack = "rolled_back"
	TxFailed     = "failed" // rolled back after (or undone since) a failed statement
)

func (e *TxError) Error() string {
	switch e.Reason {
	case TxCommitted:
		return "store: " + e.Op + ": write transaction already committed"
	case TxRolledBack:
		return "store: " + e.Op + ": write transaction already rolled back"
	}
	return fmt.Sprintf("store: %s: write transaction rolled back after a failure: %v", e.Op, e.Cause)
}

// Unwrap returns sql.ErrTxDone and the cause, if any.
func (e *TxError) Unwrap() []error {
	if e.Cause == nil {
		return []error{sql.ErrTxDone}
	}
	return []error{sql.ErrTxDone, e.Cause}
}

// Err returns nil while t can run statements, else the [*TxError] its
// calls return.
func (t *WriteTx) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.refused(""); err != nil {
		return err
	}
	return nil
}

// refused returns why t cannot run op, or nil; mu is held.
func (t *WriteTx) refused(op string) *TxError {
	switch {
	case t.ended != nil:
		return &TxError{Op: op, Reason: t.ended.Reason, Cause: t.ended.Cause}
	case t.failed != nil:
		return &TxError{Op: op, Reason: TxFailed, Cause: t.failed}
	}
	return nil
}

// ExecContext runs query, prepared once on the writer's connection.
func (t *WriteTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.exec(ctx, "exec", query, args...)
}

// exec is ExecContext with mu held.
func (t *WriteTx) exec(ctx context.Context, op, query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(ctx, op, query)
	if err != nil {
		return nil, err
	}
	var res sql.Result
	if st != nil {
		res, err = st.ExecContext(context.WithoutCancel(ctx), args...)
	} else {
		res, err = t.w.conn.ExecContext(context.WithoutCancel(ctx), query, args...)
	}
	if err != nil {
		t.fail(err)
	}
	return res, err
}

// QueryContext runs query, prepared once on the writer's connection.
// Close the rows before the transaction ends: COMMIT fails (and rolls
// back) while a statement is in progress.
func (t *WriteTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st, err := t.stmt(ctx, "query", query)
	if err != nil {
		return nil, err
	}
	var rows *sql.Rows
	if st != nil {
		rows, err = st.QueryContext(context.WithoutCancel(ctx), args...)
	} else {
		rows, err = t.w.conn.QueryContext(context.WithoutCancel(ctx), query, args...)
	}
	if err != nil {
		t.fail(err)
	}
	return rows, err
}

// QueryRowContext runs query, prepared once on the writer's connection.
// When t cannot run it, the Row's Scan returns sql.ErrTxDone (a *sql.Row
// cannot carry the [*TxError]).
func (t *WriteTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	t.mu.Lock()
	defer t.mu.Unlock()
	st, err := t.stmt(ctx, "query", query)
	switch {
	case err != nil:
		return t.w.ended.QueryRowContext(ctx, query)
	case st == nil:
		return t.w.conn.QueryRowContext(context.WithoutCancel(ctx), query, args...)
	}
	return st.QueryRowContext(context.WithoutCancel(ctx), args...)
}

// stmt returns query's prepared statement (nil: run it unprepared), or
// why it must not run; a context done or a failed prepare fails t. mu is
// held.
func (t *WriteTx) stmt(ctx context.Context, op, query string) (*sql.Stmt, error) {
	if err := t.refused(op); err != nil {
		return nil, err
	}
	if err := errors.Join(t.ctx.Err(), ctx.Err()); err != nil {
		t.fail(err)
		return nil, err
	}
	st, err := t.w.prepared(context.WithoutCancel(ctx), query)
	if err != nil {
		t.fail(err)
		return nil, err
	}
	return st, nil
}

// fail records err: inside a savepoint it waits for the savepoint to be
// undone, else the transaction rolls back now. mu is held.
func (t *WriteTx) fail(err error) {
	if t.depth > 0 {
		if t.failed == nil {
			t.failed = err
		}
		return
	}
	t.end(TxFailed, err)
}

// end ends the open transaction — COMMIT for TxCommitted, else ROLLBACK —
// and releases the writer. A failed COMMIT is rolled back (it can leave
// the transaction open, as a deferred foreign key does) and ends TxFailed.
// mu is held.
func (t *WriteTx) end(reason string, cause error) error {
	bg := context.Background() // an ending is never interrupted
	var err error
	if reason == TxCommitted {
		if _, err = t.w.ctl.commit.ExecContext(bg); err != nil {
			reason, cause = TxFailed, err
		}
	}
	if reason != TxCommitted {
		// After an automatic rollback SQLite reports "no transaction is
		// active"; the connection is clean either way.
		t.w.ctl.rollback.ExecContext(bg)
	}
	t.ended = &TxError{Reason: reason, Cause: cause}
	t.w.mu.Unlock()
	return err
}

// Commit commits t. It fails, rolling t back, when Begin's context is
// done, when a statement inside a savepoint failed and was not undone,
// inside a savepoint, or when COMMIT fails. After the end it returns a
// [*TxError].
func (t *WriteTx) Commit() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.refused("commit"); err != nil {
		if t.ended == nil {
			t.end(TxFailed, t.failed)
		}
		return err
	}
	if t.depth > 0 {
		t.end(TxFailed, errors.New("commit inside a savepoint"))
		return t.refused("commit")
	}
	if err := t.ctx.Err(); err != nil {
		t.end(TxFailed, err)
		return err
	}
	if err := t.end(TxCommitted, nil); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Rollback rolls t back. After the end it returns a [*TxError], so a
// deferred Rollback after Commit does nothing.
func (t *WriteTx) Rollback() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended != nil {
		return t.refused("rollback")
	}
	return t.end(TxRolledBack, nil)
}

// Savepoint runs fn under a savepoint of t (SQLite SAVEPOINT). If fn
// returns an error, or a statement failed inside it, fn's writes are
// undone (ROLLBACK TO) and t goes on: Savepoint returns fn's error (or
// the statement's) and t.Err() is nil. If the savepoint cannot be set,
// undone or released — SQLite may have rolled the whole transaction back
// by itself — t ends as failed and t.Err() says so. fn must not end t;
// if it does, Savepoint returns a [*TxError].
func (t *WriteTx) Savepoint(ctx context.Context, fn func() error) error {
	t.mu.Lock()
	if _, err := t.exec(ctx, "savepoint", "SAVEPOINT store_savepoint"); err != nil {
		t.mu.Unlock()
		return err
	}
	t.depth++
	t.mu.Unlock()
	ferr := fn()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.depth--
	if t.ended != nil {
		return t.refused("savepoint")
	}
	if ferr == nil {
		ferr = t.failed // fn went on after a failure: undo it all the same
	}
	if ferr == nil {
		_, err := t.exec(ctx, "savepoint", "RELEASE store_savepoint")
		return err
	}
	t.failed = nil // t was usable when the savepoint was set
	for _, q := range []string{"ROLLBACK TO store_savepoint", "RELEASE store_savepoint"} {
		if _, err := t.exec(ctx, "savepoint", q); err != nil {
			return err
		}
	}
	return ferr
}
