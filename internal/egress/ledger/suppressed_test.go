package ledger

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/store"
)

// TestSuppressedColumn: a record's count of refusals left out round-trips,
// and a database made before the column (egress schema version 1) keeps
// its rows, read with none left out.
func TestSuppressedColumn(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := store.Open(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, Component, migrations[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().ExecContext(ctx, `INSERT INTO egress_record(at, purpose, effect, reason, bytes, evidence)
		VALUES('2026-01-02T03:04:05Z', 'provider-request', 'deny', 'old', 0, 'ed1:e1:old')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	l, db := open(t, path)
	defer db.Close()
	if err := l.Append(ctx, Record{Purpose: "provider-request", Effect: "deny", Reason: "new", Evidence: "ed1:e1:new", Suppressed: 41}); err != nil {
		t.Fatal(err)
	}
	rs, err := l.Records(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range rs {
		got[r.Reason] = r.Suppressed
	}
	if want := map[string]int64{"old": 0, "new": 41}; !cmp.Equal(got, want) {
		t.Errorf("suppressed by reason %v, want %v", got, want)
	}
}
