package egress

import (
	"context"
	"database/sql"

	"github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/store"
)

// TxLedger is a [Ledger] that can claim inside a caller's write
// transaction; [*ledger.Ledger] implements it.
type TxLedger interface {
	Ledger
	ClaimTx(ctx context.Context, tx store.Tx, purpose string, c Ceiling, n int64, r Record) error
	Shares(db *sql.DB) bool
}

var _ TxLedger = (*ledger.Ledger)(nil)

// Begin starts a write transaction (BEGIN IMMEDIATE, as the store's DSN
// makes every transaction) on the ledger's database for
// [Decider.SealJoint]: a *sql.Tx of its pool, or a [store.WriteTx] of a
// writer pinned on one of its connections (the provider gate's).
type Begin func(ctx context.Context) (store.Tx, error)

// Joint is the caller's share of a joint admission: it runs inside the
// claim's write transaction, after the disclosure capacity was claimed,
// with the exact bytes to send and the decision's EvidenceDigest@1 (the
// opaque, exportable form the ledger records; issue 18 scope 4: each
// transmission attempt names its own decision). A non-nil error rolls the
// claim back with the caller's own writes.
type Joint func(ctx context.Context, tx store.Tx, wire []byte, decision string) error

// Joins reports whether [Decider.SealJoint] can run on transactions of
// db: the decider's ledger claims inside a caller's transaction and lives
// in db.
func (d *Decider) Joins(db *sql.DB) bool {
	l, ok := d.opts.Ledger.(TxLedger)
	return ok && l.Shares(db)
}

// SealJoint is [Decider.Seal] with the caller's own check-and-reserve in
// the same write transaction as the disclosure claim (issue 9: one write
// transaction per admitted request). It decides t in memory, then calls
// begin, claims, calls joint and commits. It returns the bytes to send
// only when all of that committed; then, as with Seal, the claim is never
// refunded. If joint fails, nothing is consumed and joint's error is
// returned as is (the decision is spent; no egress event is recorded: the
// caller reports its own refusal). Egress refusals are *fault.Error as
// with Seal. begin must start the transaction on a handle for which
// [Decider.Joins] reports true; the transaction is always committed or
// rolled back before SealJoint returns.
func (d *Decider) SealJoint(ctx context.Context, t Transmission, begin Begin, joint Joint) ([]byte, error) {
	l, ok := d.opts.Ledger.(TxLedger)
	if !ok {
		return nil, fault.New(fault.PolicyDenied, ReasonUnavailable, "egress ledger cannot join a transaction")
	}
	dec, wire, err := d.Decide(ctx, t)
	if err != nil {
		return nil, err
	}
	pc, rec, err := d.check(ctx, dec, wire, t)
	if err != nil {
		return nil, err
	}
	tx, err := begin(ctx)
	if err != nil {
		return nil, d.refuse(ctx, dec, t.Job, ReasonUnavailable)
	}
	defer tx.Rollback()
	err = l.ClaimTx(ctx, tx, string(t.Purpose), Ceiling{Uses: pc.MaxUses, Bytes: pc.MaxBytes}, int64(len(wire)), rec)
	if err != nil {
		tx.Rollback() // before the refusal record, which writes on its own
		return nil, d.refuse(ctx, dec, t.Job, claimReason(err))
	}
	if err := joint(ctx, tx, wire, rec.Evidence); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, d.refuse(ctx, dec, t.Job, ReasonUnavailable)
	}
	d.admitted(dec, t, rec)
	return wire, nil
}
