package operator

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/store"
)

// TestTallyCountsSuppressedRefusals: refusals the egress refusal limit
// left out of the record count in the dashboard's tallies — a record's
// carried count and a summary row's count (in place of the row) — under
// "deny" and egress.refusals_suppressed; the summary row still lists.
func TestTallyCountsSuppressedRefusals(t *testing.T) {
	o := newOwners(t, t.TempDir())
	ctx := context.Background()
	for _, r := range []ledger.Record{
		{Effect: "allow", Reason: "admitted"},
		{Effect: "deny", Reason: egress.ReasonCategory},
		{Effect: "deny", Reason: egress.ReasonCategory, Suppressed: 5},
		{Effect: "deny", Reason: egress.ReasonRefusalsSuppressed, Suppressed: 7},
	} {
		r.Purpose, r.Evidence = "provider-request", "ed1:test"
		if err := o.ledger.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	effects, reasons, refusals := tally(t, o.db.SQL())
	if got, want := effects, map[string]int{"allow": 1, "deny": 14}; !cmp.Equal(got, want) {
		t.Errorf("effects = %v, want %v", got, want)
	}
	want := []ReasonCount{{egress.ReasonRefusalsSuppressed, 12}, {egress.ReasonCategory, 2}}
	if !cmp.Equal(reasons, want) {
		t.Errorf("reasons = %v, want %v", reasons, want)
	}
	if len(refusals) != 3 || refusals[0].Reason != egress.ReasonRefusalsSuppressed || refusals[0].Suppressed != 7 {
		t.Errorf("refusals = %+v, want the summary row first of 3", refusals)
	}
}

// TestTallyOldSchema: a state database from before the refusal limit (no
// suppressed column; the dashboard never migrates) reads as before.
func TestTallyOldSchema(t *testing.T) {
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE egress_record (id INTEGER PRIMARY KEY, at TEXT NOT NULL, purpose TEXT NOT NULL, effect TEXT NOT NULL, reason TEXT NOT NULL, bytes INTEGER NOT NULL, evidence TEXT NOT NULL)`,
		`INSERT INTO egress_record(at, purpose, effect, reason, bytes, evidence) VALUES ('2026-12-06T00:00:00Z', 'provider-request', 'deny', 'egress.category', 1, 'ed1:x')`,
	} {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	effects, reasons, _ := tally(t, db.SQL())
	if !cmp.Equal(effects, map[string]int{"deny": 1}) || !cmp.Equal(reasons, []ReasonCount{{"egress.category", 1}}) {
		t.Errorf("effects %v, reasons %v; want one egress.category denial", effects, reasons)
	}
}

func tally(t *testing.T, db *sql.DB) (map[string]int, []ReasonCount, []DecisionRow) {
	t.Helper()
	ctx := context.Background()
	has, err := tables(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var tl decisionTally
	if err := tl.update(ctx, db, has); err != nil {
		t.Fatal(err)
	}
	return tl.summary()
}
