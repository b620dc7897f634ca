package gate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Amount is a token count and its price.
type Amount struct {
	Tokens int64
	Spend  NanoUSD
}

// reserve atomically checks that grant id is live, unexpired and can afford
// amt plus one request, and reserves it: one conditional UPDATE inside an
// IMMEDIATE transaction, so concurrent admissions serialise on the database
// write lock and can never pass against the same remaining budget. It
// returns the reservation id, or "" and the denial reason.
func (l *ledger) reserve(ctx context.Context, id string, amt Amount, now time.Time) (int64, string, error) {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, "", fmt.Errorf("reserve: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE gate_grants SET requests = requests + 1,
		reserved_tokens = reserved_tokens + ?1, reserved_spend = reserved_spend + ?2
		WHERE id = ?3 AND state = 'live' AND expires_at > ?4 AND requests < max_requests
		AND tokens + reserved_tokens + ?1 <= max_tokens AND spend + reserved_spend + ?2 <= max_spend`,
		amt.Tokens, amt.Spend, id, now.UnixNano())
	if err != nil {
		return 0, "", fmt.Errorf("reserve: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		reason, err := l.whyNot(ctx, id, amt, now)
		return 0, reason, err
	}
	var rid int64
	err = tx.QueryRowContext(ctx, `INSERT INTO gate_reservations (grant_id, created_at, tokens, spend)
		VALUES (?, ?, ?, ?) RETURNING id`, id, now.UnixNano(), amt.Tokens, amt.Spend).Scan(&rid)
	if err != nil {
		return 0, "", fmt.Errorf("reserve: %w", err)
	}
	return rid, "", tx.Commit()
}

// whyNot names the first failed admission condition, in admission order.
func (l *ledger) whyNot(ctx context.Context, id string, amt Amount, now time.Time) (string, error) {
	g, err := l.get(ctx, id)
	if err != nil {
		return ReasonUnknownGrant, err
	}
	switch {
	case g.State != Live:
		return "grant." + string(g.State), nil
	case !now.Before(g.Expires):
		return ReasonExpired, nil
	case g.Used.Requests >= g.Limits.Requests:
		return ReasonBudgetRequests, nil
	case g.Used.Tokens+g.Reserved.Tokens+amt.Tokens > g.Limits.Tokens:
		return ReasonBudgetTokens, nil
	}
	return ReasonBudgetSpend, nil
}

// Outcome says how a reservation was settled.
type Outcome string

// Settlement outcomes.
const (
	OutcomeUsage     Outcome = "usage"     // provider usage report
	OutcomeNoUsage   Outcome = "no_usage"  // stream ended without one: full reservation
	OutcomeCut       Outcome = "cut"       // revoked/expired/abandoned: full reservation
	OutcomeUpstream  Outcome = "upstream"  // upstream error status: provider bills nothing
	OutcomeNotSent   Outcome = "not_sent"  // nothing reached the provider
	OutcomeOverdrawn Outcome = "overdrawn" // usage above the reservation: charged as reported
)

// settle replaces reservation rid by the charged amount, once. A second
// call is a no-op.
func (l *ledger) settle(ctx context.Context, rid int64, charged Amount, out Outcome, now time.Time) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	defer tx.Rollback()
	var gid string
	var amt Amount
	err = tx.QueryRowContext(ctx, `UPDATE gate_reservations SET settled_at = ?, outcome = ?, settled_tokens = ?,
		settled_spend = ? WHERE id = ? AND settled_at IS NULL RETURNING grant_id, tokens, spend`,
		now.UnixNano(), out, charged.Tokens, charged.Spend, rid).Scan(&gid, &amt.Tokens, &amt.Spend)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // already settled: settlement is idempotent
	}
	if err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	_, err = tx.ExecContext(ctx, `UPDATE gate_grants SET reserved_tokens = reserved_tokens - ?,
		reserved_spend = reserved_spend - ?, tokens = tokens + ?, spend = spend + ? WHERE id = ?`,
		amt.Tokens, amt.Spend, charged.Tokens, charged.Spend, gid)
	if err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	return tx.Commit()
}
