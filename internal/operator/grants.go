package operator

import (
	"context"
	"database/sql"
	"time"
)

// GrantRow is one provider-gate grant as the dashboard shows it: its
// binding and its counters against its limits. Spend is in nano-USD
// (1e-9 dollars).
type GrantRow struct {
	ID, Provider, Model, Job, State string
	Created, Expires                time.Time
	Limits, Used, Reserved          Counters
}

// Counters are request, token and spend (nano-USD) amounts.
type Counters struct {
	Requests, Tokens, Spend int64
}

// grants returns up to limit grants, newest first, and how many exist.
func grants(ctx context.Context, db *sql.DB, has map[string]bool, limit int) ([]GrantRow, int, error) {
	if !has["gate_grants"] {
		return nil, 0, nil
	}
	var total int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM gate_grants`).Scan(&total); err != nil {
		return nil, 0, stateErr(err)
	}
	rows, err := db.QueryContext(ctx, `SELECT id, provider, model, job, state, created_at, expires_at,
		max_requests, max_tokens, max_spend, requests, tokens, spend, reserved_tokens, reserved_spend
		FROM gate_grants ORDER BY created_at DESC LIMIT ?`, limit)
	if err != nil {
		return nil, 0, stateErr(err)
	}
	defer rows.Close()
	var out []GrantRow
	for rows.Next() {
		var g GrantRow
		var created, expires int64
		if err := rows.Scan(&g.ID, &g.Provider, &g.Model, &g.Job, &g.State, &created, &expires,
			&g.Limits.Requests, &g.Limits.Tokens, &g.Limits.Spend, &g.Used.Requests, &g.Used.Tokens, &g.Used.Spend,
			&g.Reserved.Tokens, &g.Reserved.Spend); err != nil {
			return nil, 0, stateErr(err)
		}
		g.Created, g.Expires = time.Unix(0, created).UTC(), time.Unix(0, expires).UTC()
		out = append(out, g)
	}
	return out, total, stateErr(rows.Err())
}

// jobGrants sums each job's grants: the gate counters of a job.
type jobGrants struct {
	Job          string
	Grants       int
	Live         bool // a grant of the job is live and unexpired
	First        time.Time
	Used, Limits Counters
	Reserved     Counters
}

// grantsByJob returns the gate counters of the limit most recent jobs.
func grantsByJob(ctx context.Context, db *sql.DB, has map[string]bool, now time.Time, limit int) ([]jobGrants, error) {
	if !has["gate_grants"] {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT job, COUNT(*), MAX(state = 'live' AND expires_at > ?), MIN(created_at),
		SUM(requests), SUM(tokens), SUM(spend), SUM(max_requests), SUM(max_tokens), SUM(max_spend),
		SUM(reserved_tokens), SUM(reserved_spend)
		FROM gate_grants GROUP BY job ORDER BY MIN(created_at) DESC LIMIT ?`, now.UnixNano(), limit)
	if err != nil {
		return nil, stateErr(err)
	}
	defer rows.Close()
	var out []jobGrants
	for rows.Next() {
		var j jobGrants
		var first int64
		if err := rows.Scan(&j.Job, &j.Grants, &j.Live, &first, &j.Used.Requests, &j.Used.Tokens, &j.Used.Spend,
			&j.Limits.Requests, &j.Limits.Tokens, &j.Limits.Spend, &j.Reserved.Tokens, &j.Reserved.Spend); err != nil {
			return nil, stateErr(err)
		}
		j.First = time.Unix(0, first).UTC()
		out = append(out, j)
	}
	return out, stateErr(rows.Err())
}
