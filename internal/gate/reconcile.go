package gate

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/coagent8/coagent8/internal/store"
)

// orphanAfter is how long after its grant expired an open attempt is
// certainly no longer in flight in any gate: streams are cut at grant
// expiry and drains are bounded by DrainTimeout (default 2 min). An hour
// leaves room for a gate configured with a longer drain.
const orphanAfter = time.Hour

// reconcileEvery is how often the watcher looks for orphaned attempts.
const reconcileEvery = time.Minute

// ReconcileOrphans settles the open attempts that no gate can still be
// serving — those of grants expired more than an hour ago, left behind by
// a gate that died mid-exchange — as uncertain and charged their full
// reservation (issue 18 scope 4: no usage arrived to reconcile them;
// never zero). It returns how many it settled. The watcher runs it every
// minute; it is safe to run from several gates at once.
func (g *Gate) ReconcileOrphans(ctx context.Context) (int, error) {
	cutoff := g.opts.Now().Add(-orphanAfter).UnixNano()
	n := 0
	err := g.ledger.w.write(ctx, func(tx store.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT r.id, r.grant_id, r.tokens, r.spend, r.sent_at IS NOT NULL
			FROM gate_reservations r JOIN gate_grants g ON g.id = r.grant_id
			WHERE r.settled_at IS NULL AND g.expires_at < ? LIMIT 1000`, cutoff)
		if err != nil {
			return err
		}
		orphans, err := scanOrphans(rows)
		if err != nil {
			return err
		}
		now := g.opts.Now().UnixNano()
		for _, o := range orphans {
			if err := g.ledger.settleOrphan(ctx, tx, o, now); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reconcile attempts: %w", err)
	}
	return n, nil
}

type orphan struct {
	rid     int64
	grant   string
	amt     Amount
	wasSent bool
}

func scanOrphans(rows *sql.Rows) ([]orphan, error) {
	defer rows.Close()
	var out []orphan
	for rows.Next() {
		var o orphan
		if err := rows.Scan(&o.rid, &o.grant, &o.amt.Tokens, &o.amt.Spend, &o.wasSent); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// settleOrphan charges an orphaned attempt its reservation, inside tx.
// An attempt never recorded sent may still have been sent (the mark is
// written within an interval), so it is uncertain too: never "not sent"
// without evidence.
func (l *ledger) settleOrphan(ctx context.Context, tx store.Tx, o orphan, now int64) error {
	res, err := l.st.settle.Exec(ctx, tx, now, OutcomeLost, o.amt.Tokens, o.amt.Spend,
		AttemptUncertain, nil, o.rid, o.grant, o.amt.Tokens, o.amt.Spend)
	if err != nil {
		return err
	}
	if k, _ := res.RowsAffected(); k != 1 {
		return nil // settled meanwhile
	}
	_, err = l.st.release.Exec(ctx, tx, o.amt.Tokens, o.amt.Spend, o.amt.Tokens, o.amt.Spend, o.grant)
	return err
}
