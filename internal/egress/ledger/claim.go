package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/coagent8/coagent8/internal/store"
)

// Claim consumes one use and n bytes of purpose's account under ceiling c,
// opening the account with c on its first claim, and appends r (effect
// "allow", Bytes n) in the same transaction. It returns nil only when the
// claim committed; then the caller may send. A refusal is
// [ErrConfigConflict], [ErrUsesExhausted] or [ErrBytesExhausted]; any
// other error means the store failed and the caller must not send either.
func (l *Ledger) Claim(ctx context.Context, purpose string, c Ceiling, n int64, r Record) error {
	// Claims of this process queue on a Go lock, not in SQLite's
	// sleep-and-retry busy handler: with hundreds of concurrent claims the
	// handler is unfair and one of them could wait past the busy timeout
	// (a refusal for no reason). Other processes still serialise through
	// SQLite's own lock.
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	tx, err := l.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (store DSN): one writer at a time
	if err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	defer tx.Rollback()
	if err := l.ClaimTx(ctx, tx, purpose, c, n, r); err != nil {
		return err
	}
	return tx.Commit()
}

// ClaimTx is [Ledger.Claim] inside tx, a write transaction the caller
// began on the ledger's database (see [Ledger.Shares]) — a *sql.Tx or a
// pinned writer's [store.WriteTx] — and commits or rolls back: the claim counts only if tx commits, so the caller can make
// its own check-and-reserve atomic with it (the provider gate's budget,
// issue 9). Errors are those of Claim; after any error the caller must
// roll tx back.
func (l *Ledger) ClaimTx(ctx context.Context, tx store.Tx, purpose string, c Ceiling, n int64, r Record) error {
	if c.Uses <= 0 || c.Bytes <= 0 || n < 0 {
		return fmt.Errorf("claim: ceilings must be positive and size non-negative")
	}
	// The hot path is one conditional UPDATE: it matches only an account
	// with exactly these ceilings and room for the claim. Anything else
	// (first claim, conflict, exhaustion) is sorted out by settle.
	res, err := l.stmts.consume.Exec(ctx, tx, n, l.host, purpose, c.Uses, c.Bytes)
	if err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	if k, _ := res.RowsAffected(); k != 1 {
		if err := l.settle(ctx, tx, purpose, c, n); err != nil {
			return err
		}
	}
	r.Purpose, r.Effect, r.Bytes = purpose, "allow", n
	if err := l.insert(ctx, tx, r); err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	return nil
}

// settle handles a claim the fast UPDATE did not match: it opens a new
// account with c and claims from it, or names the refusal (R-163: a
// disagreeing configuration refuses instead of opening a fresh account).
func (l *Ledger) settle(ctx context.Context, tx store.Tx, purpose string, c Ceiling, n int64) error {
	var got, used Ceiling
	err := tx.QueryRowContext(ctx, `SELECT max_uses, max_bytes, used_uses, used_bytes FROM egress_account
		WHERE host = ? AND purpose = ?`, l.host, purpose).Scan(&got.Uses, &got.Bytes, &used.Uses, &used.Bytes)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return l.open(ctx, tx, purpose, c, n)
	case err != nil:
		return fmt.Errorf("read disclosure account: %w", err)
	case got != c:
		return ErrConfigConflict
	case used.Uses+1 > got.Uses:
		return ErrUsesExhausted
	case used.Bytes+n > got.Bytes:
		return ErrBytesExhausted
	}
	return fmt.Errorf("claim: account changed concurrently") // impossible under BEGIN IMMEDIATE
}

// open creates purpose's account with ceilings c and this first claim.
func (l *Ledger) open(ctx context.Context, tx store.Tx, purpose string, c Ceiling, n int64) error {
	if n > c.Bytes {
		return ErrBytesExhausted
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO egress_account(host, purpose, max_uses, max_bytes, used_uses, used_bytes, created)
		VALUES(?, ?, ?, ?, 1, ?, ?)`, l.host, purpose, c.Uses, c.Bytes, n, l.now().UTC().Format(time.RFC3339Nano))
	if err != nil {
		return fmt.Errorf("open disclosure account: %w", err)
	}
	return nil
}
