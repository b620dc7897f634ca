package ledger

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/store"
)

func open(t *testing.T, path string) (*Ledger, *store.DB) {
	t.Helper()
	db, err := store.Open(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(context.Background(), db, nil)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return l, db
}

// TestCapacity covers R-161: 2 uses / 1000 bytes, a 600-byte candidate.
func TestCapacity(t *testing.T) {
	ctx := context.Background()
	l, db := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer db.Close()
	c := Ceiling{Uses: 2, Bytes: 1000}
	steps := []struct {
		n    int64
		want error
	}{{600, nil}, {600, ErrBytesExhausted}, {400, nil}, {0, ErrUsesExhausted}}
	for i, s := range steps {
		if err := l.Claim(ctx, "provider-request", c, s.n, Record{Evidence: "ed1:e1:x"}); !errors.Is(err, s.want) {
			t.Errorf("step %d: got %v want %v", i, err, s.want)
		}
	}
	_, left, ok, err := l.Remaining(ctx, "provider-request")
	if err != nil || !ok || left != (Ceiling{0, 0}) {
		t.Errorf("left %+v ok %v err %v", left, ok, err)
	}
}

// TestRestartAndConflict covers: capacity survives reopening
// the file; a configuration with other ceilings refuses and adds no row.
func TestRestartAndConflict(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	c := Ceiling{Uses: 1, Bytes: 100}
	l, db := open(t, path)
	host := l.Host()
	if err := l.Claim(ctx, "provider-request", c, 10, Record{Evidence: "e"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	l, db = open(t, path)
	defer db.Close()
	if l.Host() != host {
		t.Error("host identity changed on reopen")
	}
	if err := l.Claim(ctx, "provider-request", c, 10, Record{Evidence: "e"}); !errors.Is(err, ErrUsesExhausted) {
		t.Errorf("after restart: %v", err)
	}
	for _, other := range []Ceiling{{2, 100}, {1, 1000}, {1, 5}} {
		if err := l.Claim(ctx, "provider-request", other, 1, Record{Evidence: "e"}); !errors.Is(err, ErrConfigConflict) {
			t.Errorf("ceiling %+v: %v", other, err)
		}
	}
	var n int
	db.SQL().QueryRow(`SELECT count(*) FROM egress_account`).Scan(&n)
	if n != 1 {
		t.Errorf("%d accounts, want 1", n)
	}
}

// TestConcurrentClaims: 40 concurrent claims against 10 uses → exactly 10.
func TestConcurrentClaims(t *testing.T) {
	ctx := context.Background()
	l, db := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer db.Close()
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			err := l.Claim(ctx, "provider-request", Ceiling{Uses: 10, Bytes: 1 << 20}, 100, Record{Evidence: "e"})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrUsesExhausted):
				refused.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 10 || refused.Load() != 30 {
		t.Errorf("ok %d refused %d", ok.Load(), refused.Load())
	}
}

func TestRecords(t *testing.T) {
	ctx := context.Background()
	l, db := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer db.Close()
	for _, e := range []string{"allow", "deny", "allow"} {
		if err := l.Append(ctx, Record{Purpose: "provider-request", Effect: e, Reason: "r", Evidence: "ed1:e1:" + e}); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := l.Records(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Effect)
	}
	if diff := cmp.Diff([]string{"deny", "allow"}, got); diff != "" {
		t.Error(diff)
	}
}

// TestClaimTx: a claim inside the caller's transaction counts only if
// that transaction commits (issue 9: the gate's budget refusal rolls the
// disclosure claim back).
func TestClaimTx(t *testing.T) {
	ctx := context.Background()
	l, db := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer db.Close()
	if !l.Shares(db.SQL()) {
		t.Fatal("ledger does not share its own handle")
	}
	c := Ceiling{Uses: 5, Bytes: 1000}
	claim := func(commit bool) {
		tx, err := db.SQL().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.ClaimTx(ctx, tx, "provider-request", c, 100, Record{Evidence: "e"}); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	claim(false) // would open the account: rolled back, nothing retained
	if _, _, ok, _ := l.Remaining(ctx, "provider-request"); ok {
		t.Error("rolled-back first claim opened the account")
	}
	claim(true)
	claim(false)
	_, left, _, err := l.Remaining(ctx, "provider-request")
	if err != nil || left != (Ceiling{Uses: 4, Bytes: 900}) {
		t.Errorf("left %+v err %v, want one committed claim", left, err)
	}
	rs, err := l.Records(ctx, 10)
	if err != nil || len(rs) != 1 {
		t.Errorf("%d records (err %v), want the committed claim's only", len(rs), err)
	}
}
