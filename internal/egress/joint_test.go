package egress

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/store"
)

// txKinds are the two kinds of transaction SealJoint runs on: the pool's
// *sql.Tx and a pinned writer's store.WriteTx (the provider gate's).
var txKinds = []struct {
	name  string
	begin func(t testing.TB, db *store.DB) Begin
}{
	{"sql.Tx", func(t testing.TB, db *store.DB) Begin {
		return func(ctx context.Context) (store.Tx, error) { return db.SQL().BeginTx(ctx, nil) }
	}},
	{"WriteTx", func(t testing.TB, db *store.DB) Begin {
		w := pinnedWriter(t, db)
		return func(ctx context.Context) (store.Tx, error) { return w.Begin(ctx) }
	}},
}

// pinnedWriter is a store.Writer on a connection of db.
func pinnedWriter(t testing.TB, db *store.DB) *store.Writer {
	t.Helper()
	c, err := db.SQL().Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w, err := store.NewWriter(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(); c.Close() })
	return w
}

// TestSealJoint: the caller's share runs in the claim's transaction; a
// refusal by the caller rolls the claim back and consumes nothing (issue
// 9), an egress refusal never begins a transaction, and only a committed
// admission records its decision event. Both kinds of transaction.
func TestSealJoint(t *testing.T) {
	for _, kind := range txKinds {
		t.Run(kind.name, func(t *testing.T) { testSealJoint(t, kind.begin) })
	}
}

func testSealJoint(t *testing.T, beginOn func(testing.TB, *store.DB) Begin) {
	errBudget := errors.New("caller refused")
	tests := []struct {
		name      string
		text      string
		joint     error
		wantErr   func(error) bool
		wantBegin bool
		wantUsed  int64 // uses consumed
		wantEvent []string
	}{
		{"admitted", "Public readme.", nil, func(err error) bool { return err == nil }, true, 1,
			[]string{string(event.TypeDecision) + " " + ReasonRaw}},
		{"caller refuses: rolled back", "Public readme.", errBudget, func(err error) bool { return errors.Is(err, errBudget) },
			true, 0, nil},
		{"egress refuses: no transaction", "key=" + syntheticKey(), nil,
			func(err error) bool { return reasonOf(err) == ReasonCategory }, false, 0,
			[]string{string(event.TypeRefusal) + " " + ReasonCategory}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, baseConfig())
			ctx := context.Background()
			if !f.d.Joins(f.db.SQL()) {
				t.Fatal("decider does not join its own ledger's database")
			}
			began, open := false, beginOn(t, f.db)
			begin := func(ctx context.Context) (store.Tx, error) { began = true; return open(ctx) }
			var sawWire []byte
			joint := func(ctx context.Context, tx store.Tx, wire []byte, decision string) error {
				if !strings.HasPrefix(decision, "ed1:") {
					t.Errorf("joint got decision %q, want an evidence digest", decision)
				}
				// The claim is visible inside the transaction.
				var used int64
				if err := tx.QueryRowContext(ctx, `SELECT used_uses FROM egress_account`).Scan(&used); err != nil || used != 1 {
					t.Errorf("inside the transaction: used %d err %v, want 1", used, err)
				}
				sawWire = wire
				return tt.joint
			}
			x := tx(t, tt.text)
			out, err := f.d.SealJoint(ctx, x, begin, joint)
			if !tt.wantErr(err) {
				t.Fatalf("SealJoint: %v", err)
			}
			if began != tt.wantBegin {
				t.Errorf("began %v want %v", began, tt.wantBegin)
			}
			if err == nil && string(out) != string(sawWire) {
				t.Error("returned bytes differ from those the caller reserved for")
			}
			c, left, opened, lerr := f.led.Remaining(ctx, string(ProviderRequest))
			if lerr != nil {
				t.Fatal(lerr)
			}
			if used := c.Uses - left.Uses; used != tt.wantUsed || opened != (tt.wantUsed > 0) {
				t.Errorf("uses consumed %d (account opened %v), want %d", used, opened, tt.wantUsed)
			}
			var got []string
			for _, e := range f.events.Events() {
				got = append(got, string(e.Type)+" "+e.Reason)
			}
			if diff := cmp.Diff(tt.wantEvent, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJoinsOnlyItsDatabase: a transaction of another database cannot
// carry the claim.
func TestJoinsOnlyItsDatabase(t *testing.T) {
	f := newFixture(t, baseConfig())
	other, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "other.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if f.d.Joins(other.SQL()) {
		t.Error("decider joins a foreign database")
	}
}

// BenchmarkSealJoint is the joint admission of a small body on either
// kind of transaction: the decision, BEGIN IMMEDIATE, the disclosure
// claim and record, COMMIT (the caller's share does nothing).
//
//	go test ./internal/egress -run '^$' -bench SealJoint -benchmem
func BenchmarkSealJoint(b *testing.B) {
	for _, kind := range txKinds {
		b.Run(kind.name, func(b *testing.B) {
			c := baseConfig()
			c.Purposes[ProviderRequest] = PurposeConfig{MaxUses: 1 << 40, MaxBytes: 1 << 60}
			f := newFixtureB(b, c)
			begin := kind.begin(b, f.db)
			joint := func(context.Context, store.Tx, []byte, string) error { return nil }
			x := Transmission{Job: "j", Purpose: ProviderRequest, Target: portal(), JSON: true, Method: "POST",
				Body: []byte(`{"model":"claude-test","max_tokens":256,"messages":[{"role":"user","content":"hi"}]}`)}
			ctx, cancel := context.WithCancel(context.Background()) // a request's
			defer cancel()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.d.SealJoint(ctx, x, begin, joint); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
