package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Claim consumes one use and n bytes of purpose's account under ceiling c,
// opening the account with c on its first claim, and appends r (effect
// "allow", Bytes n) in the same transaction. It returns nil only when the
// claim committed; then the caller may send. A refusal is
// [ErrConfigConflict], [ErrUsesExhausted] or [ErrBytesExhausted]; any
// other error means the store failed and the caller must not send either.
func (l *Ledger) Claim(ctx context.Context, purpose string, c Ceiling, n int64, r Record) error {
	if c.Uses <= 0 || c.Bytes <= 0 || n < 0 {
		return fmt.Errorf("claim: ceilings must be positive and size non-negative")
	}
	tx, err := l.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (store DSN): one writer at a time
	if err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	defer tx.Rollback()
	if err := l.open(ctx, tx, purpose, c); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `UPDATE egress_account SET used_uses = used_uses + 1, used_bytes = used_bytes + ?
		WHERE host = ? AND purpose = ? AND used_uses + 1 <= max_uses AND used_bytes + ? <= max_bytes`,
		n, l.host, purpose, n)
	if err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	if k, _ := res.RowsAffected(); k != 1 {
		return l.why(ctx, tx, purpose, n)
	}
	r.Purpose, r.Effect, r.Bytes = purpose, "allow", n
	if err := l.insert(ctx, tx, r); err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	return tx.Commit()
}

// open creates the account with c, or checks that the retained ceilings
// equal c (R-163: a disagreeing configuration refuses).
func (l *Ledger) open(ctx context.Context, tx *sql.Tx, purpose string, c Ceiling) error {
	var got Ceiling
	err := tx.QueryRowContext(ctx, `SELECT max_uses, max_bytes FROM egress_account WHERE host = ? AND purpose = ?`,
		l.host, purpose).Scan(&got.Uses, &got.Bytes)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, `INSERT INTO egress_account(host, purpose, max_uses, max_bytes, created)
			VALUES(?, ?, ?, ?, ?)`, l.host, purpose, c.Uses, c.Bytes, l.now().UTC().Format(time.RFC3339Nano))
		if err != nil {
			return fmt.Errorf("open disclosure account: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read disclosure account: %w", err)
	}
	if got != c {
		return ErrConfigConflict
	}
	return nil
}

func (l *Ledger) why(ctx context.Context, tx *sql.Tx, purpose string, n int64) error {
	var mu, mb, uu, ub int64
	err := tx.QueryRowContext(ctx, `SELECT max_uses, max_bytes, used_uses, used_bytes FROM egress_account
		WHERE host = ? AND purpose = ?`, l.host, purpose).Scan(&mu, &mb, &uu, &ub)
	switch {
	case err != nil:
		return fmt.Errorf("claim: %w", err)
	case uu+1 > mu:
		return ErrUsesExhausted
	case ub+n > mb:
		return ErrBytesExhausted
	}
	return fmt.Errorf("claim: account changed concurrently") // impossible under BEGIN IMMEDIATE
}
