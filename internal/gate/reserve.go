package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coagent8/coagent8/internal/store"
)

// Amount is a token count and its price.
type Amount struct {
	Tokens int64   `json:"tokens"`
	Spend  NanoUSD `json:"spend_nano_usd"` // as the grant's counters
}

// errRefused rolls back a write transaction whose check refused.
var errRefused = errors.New("refused")

// reserveTx atomically checks that grant id is live, unexpired and can
// afford amt plus one request, and reserves it, inside tx: one
// conditional UPDATE in an IMMEDIATE transaction, so concurrent
// admissions serialise on the database write lock and can never pass
// against the same remaining budget. It returns the reservation id, or
// "" and the denial reason (then tx holds no write of it).
func (l *ledger) reserveTx(ctx context.Context, tx store.Tx, id string, amt Amount, now time.Time, tag attemptTag) (int64, string, error) {
	res, err := l.st.reserve.Exec(ctx, tx, amt.Tokens, amt.Spend, id, now.UnixNano())
	if err != nil {
		return 0, "", fmt.Errorf("reserve: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		reason, err := l.whyNot(ctx, tx, id, amt, now)
		return 0, reason, err
	}
	rid, err := l.book(ctx, tx, id, amt, now, tag)
	return rid, "", err
}

// attemptTag is what an attempt row records besides its amounts.
type attemptTag struct {
	decision string // the egress decision's EvidenceDigest@1, or ""
	route    string // "METHOD /path"
}

// book inserts the attempt (reservation) row of grant id inside tx.
func (l *ledger) book(ctx context.Context, tx store.Tx, id string, amt Amount, now time.Time, tag attemptTag) (int64, error) {
	res, err := l.st.book.Exec(ctx, tx, id, now.UnixNano(), amt.Tokens, amt.Spend, tag.decision, tag.route)
	if err != nil {
		return 0, fmt.Errorf("book attempt: %w", err)
	}
	rid, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("book attempt: %w", err)
	}
	return rid, nil
}

// whyNot names the first failed admission condition, in admission order,
// read inside tx (or from the pool when tx is nil).
func (l *ledger) whyNot(ctx context.Context, tx store.Tx, id string, amt Amount, now time.Time) (string, error) {
	g, err := l.get(ctx, tx, id)
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
	}
	return budgetReason(g, amt), nil
}

// budgetReason tells a permanent budget refusal from one that passes once
// the reservations in flight settle: Used only grows, so a request that
// does not fit beside it never will, and one larger than the grant's
// whole limit never could.
func budgetReason(g Grant, amt Amount) string {
	switch {
	case amt.Tokens > g.Limits.Tokens:
		return ReasonRequestTokens
	case amt.Spend > g.Limits.Spend:
		return ReasonRequestSpend
	case g.Used.Tokens+amt.Tokens > g.Limits.Tokens:
		return ReasonBudgetTokens
	case g.Used.Spend+amt.Spend > g.Limits.Spend:
		return ReasonBudgetSpend
	}
	return ReasonBudgetReserved
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
	OutcomeWithheld  Outcome = "withheld"  // response withheld (credential echo): full reservation
	OutcomeLost      Outcome = "lost"      // connection lost after the first byte, no usage: full reservation
)

// settle replaces reservation rid — of grant gid, holding reserved — by
// the charged amount, once, in a write transaction on the writer: the
// next one that starts within carry, else its own (writer.settle). A
// second call is a no-op.
func (l *ledger) settle(ctx context.Context, rid int64, gid string, reserved, charged Amount, out Outcome, sent int64, now time.Time, carry time.Duration) error {
	var sentAt any
	if sent != 0 {
		sentAt = sent
	}
	err := l.w.settle(ctx, carry, func(tx store.Tx) error {
		res, err := l.st.settle.Exec(ctx, tx, now.UnixNano(), out, charged.Tokens, charged.Spend,
			attemptOf(out, sent != 0), sentAt, rid, gid, reserved.Tokens, reserved.Spend)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return errSettled // already settled (or not this reservation): nothing to move
		}
		_, err = l.st.release.Exec(ctx, tx, reserved.Tokens, reserved.Spend, charged.Tokens, charged.Spend, gid)
		return err
	})
	switch {
	case errors.Is(err, errSettled):
		return nil // settlement is idempotent
	case err != nil:
		return fmt.Errorf("settle: %w", err)
	}
	return nil
}

var errSettled = errors.New("reservation already settled")
