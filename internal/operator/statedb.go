package operator

import (
	"context"
	"database/sql"

	"github.com/coagent8/coagent8/internal/fault"
)

// The dashboard reads the tables other components own (gate_grants of
// internal/gate, egress_record and egress_account of internal/egress/ledger,
// sessions and turns of internal/session) with its own read-only queries:
// those packages expose no listing, and opening them would write (lease
// recovery, host identity, migrations). It never migrates or writes; a
// table that does not exist yet is simply empty. conformance_test.go
// creates the tables through their owners, so a schema change there fails
// the tests here.

// suppressedCol is the key tables sets when egress_record has the
// suppressed column (egress ledger schema 2): an older database the
// dashboard only reads has none.
const suppressedCol = "egress_record.suppressed"

// tables returns the names of the state database's tables, and
// [suppressedCol] when that column exists.
func tables(ctx context.Context, db *sql.DB) (map[string]bool, error) {
	out, err := tableNames(ctx, db)
	if err != nil || !out["egress_record"] {
		return out, err
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('egress_record') WHERE name = 'suppressed'`).Scan(&n); err != nil {
		return nil, stateErr(err)
	}
	out[suppressedCol] = n > 0
	return out, nil
}

func tableNames(ctx context.Context, db *sql.DB) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, stateErr(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, stateErr(err)
		}
		out[n] = true
	}
	return out, stateErr(rows.Err())
}

// stateErr types a failed read of the state database. The cause (which
// may name paths) stays internal.
func stateErr(err error) error {
	if err == nil {
		return nil
	}
	return fault.Wrap(fault.ProcessError, "operator.state_unavailable",
		"The state database could not be read (another process may hold it busy); the page retries on the next change.", err).WithRetry()
}
