package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/coagent8/coagent8/internal/store"
)

// Record is one egress decision in exportable form: no payload, no raw
// digest, no target or subject — only the code-defined purpose, the
// effect, the reason and the EvidenceDigest@1 of the restricted record.
// Suppressed is how many refusals of the same job were left out of the
// ledger since its previous record (refusal records are limited per job;
// internal/egress): 0 on claims and on most refusals.
type Record struct {
	Time       time.Time `json:"time"`
	Purpose    string    `json:"purpose"`
	Effect     string    `json:"effect"`
	Reason     string    `json:"reason"`
	Bytes      int64     `json:"bytes"`
	Evidence   string    `json:"evidence"`
	Suppressed int64     `json:"suppressed,omitempty"`
}

// Append stores r (a refusal: it consumes nothing). A zero Time is set
// to now.
func (l *Ledger) Append(ctx context.Context, r Record) error {
	return l.insert(ctx, nil, r)
}

// insert stores r inside tx, or on its own when tx is nil.
func (l *Ledger) insert(ctx context.Context, tx store.Tx, r Record) error {
	if r.Time.IsZero() {
		r.Time = l.now()
	}
	_, err := l.stmts.record.Exec(ctx, tx, r.Time.UTC().Format(time.RFC3339Nano), r.Purpose, r.Effect, r.Reason, r.Bytes, r.Evidence, r.Suppressed)
	if err != nil {
		return fmt.Errorf("record egress decision: %w", err)
	}
	return nil
}

// Records returns the last limit decision records, oldest first.
func (l *Ledger) Records(ctx context.Context, limit int) ([]Record, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT at, purpose, effect, reason, bytes, evidence, suppressed FROM
		(SELECT * FROM egress_record ORDER BY id DESC LIMIT ?) ORDER BY id`, limit)
	if err != nil {
		return nil, fmt.Errorf("read egress records: %w", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var r Record
		var at string
		if err := rows.Scan(&at, &r.Purpose, &r.Effect, &r.Reason, &r.Bytes, &r.Evidence, &r.Suppressed); err != nil {
			return nil, fmt.Errorf("read egress records: %w", err)
		}
		r.Time, _ = time.Parse(time.RFC3339Nano, at)
		out = append(out, r)
	}
	return out, rows.Err()
}
