package gate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/store"
)

// TestReservationsMigrationKeepsRows: schema v6 rebuilds gate_reservations
// without AUTOINCREMENT (one WAL page less per admission; issue 18
// performance). The rows and their ids survive, the next id follows the
// largest, and a booking no longer writes sqlite_sequence.
func TestReservationsMigrationKeepsRows(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, component, migrations[:5]); err != nil {
		t.Fatal(err)
	}
	sq := db.SQL()
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := sq.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec(`INSERT INTO gate_grants (id, phantom_hash, provider, model, job, secret_ref, state, created_at,
		expires_at, price_in, price_out, price_cw, price_cr, out_ceiling, max_requests, max_tokens, max_spend)
		VALUES ('g1', x'01', 'anthropic', 'm', 'j', 'env:K', 'live', 1, 2, 0, 0, 0, 0, 0, 9, 9, 9)`)
	for _, id := range []int{3, 7} {
		mustExec(`INSERT INTO gate_reservations (id, grant_id, created_at, tokens, spend, settled_at, outcome,
			attempt, decision, sent_at, route) VALUES (?, 'g1', 10, 5, 6, 11, 'usage', 'completed', 'd', 12, 'POST /v1/messages')`, id)
	}
	type row struct {
		ID                                int64
		Attempt, Decision, Route, Outcome string
		Tokens, Spend, Settled, Sent      int64
	}
	read := func() []row {
		t.Helper()
		rs, err := sq.QueryContext(ctx, `SELECT id, attempt, decision, route, outcome, tokens, spend, settled_at, sent_at
			FROM gate_reservations ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var out []row
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.ID, &r.Attempt, &r.Decision, &r.Route, &r.Outcome, &r.Tokens, &r.Spend, &r.Settled, &r.Sent); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	want := read()
	if err := db.Migrate(ctx, component, migrations); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, read()); diff != "" {
		t.Fatalf("rows changed by the migration (-want +got):\n%s", diff)
	}
	var ddl string
	if err := sq.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE name = 'gate_reservations'`).Scan(&ddl); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToUpper(ddl), "AUTOINCREMENT") {
		t.Fatalf("gate_reservations still AUTOINCREMENT: %s", ddl)
	}
	mustExec(`DELETE FROM sqlite_sequence WHERE name = 'gate_reservations'`)
	res, err := sq.ExecContext(ctx, `INSERT INTO gate_reservations (grant_id, created_at, tokens, spend) VALUES ('g1', 1, 0, 0)`)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := res.LastInsertId(); id != 8 {
		t.Fatalf("next id = %d, want 8 (largest + 1)", id)
	}
	var n int
	sq.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_sequence WHERE name = 'gate_reservations'`).Scan(&n)
	if n != 0 {
		t.Fatal("a booking still writes sqlite_sequence")
	}
}
