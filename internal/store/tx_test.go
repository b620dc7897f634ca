package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// txDB opens a database with table kv(k PRIMARY KEY, v) and a table
// whose foreign key is checked at COMMIT.
func txDB(t testing.TB, busy time.Duration) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "tx.db"), busy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	err = db.Migrate(context.Background(), "txtest", []Migration{{Version: 1, SQL: `
		CREATE TABLE kv (k INTEGER PRIMARY KEY, v INTEGER NOT NULL);
		CREATE TABLE child (p INTEGER REFERENCES kv(k) DEFERRABLE INITIALLY DEFERRED);`}})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// txWriter pins a connection of db for a Writer.
func txWriter(t testing.TB, db *DB) *Writer {
	t.Helper()
	c, err := db.SQL().Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(); c.Close() })
	return w
}

func begin(t testing.TB, w *Writer) *WriteTx {
	t.Helper()
	tx, err := w.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// keys returns kv's keys, read from the pool (committed rows only).
func keys(t testing.TB, db *DB) []int {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT k FROM kv ORDER BY k`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []int{}
	for rows.Next() {
		var k int
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	return out
}

func put(ctx context.Context, tx Tx, k int) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO kv VALUES (?, 0)`, k)
	return err
}

// TestWriteTxEnds: a committed transaction's writes are durable, a rolled
// back one's are not, and the writer takes the next transaction.
func TestWriteTxEnds(t *testing.T) {
	tests := []struct {
		name string
		end  func(*WriteTx) error
		want []int
	}{
		{"commit", (*WriteTx).Commit, []int{1, 2}},
		{"rollback", (*WriteTx).Rollback, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := txDB(t, 0)
			w := txWriter(t, db)
			ctx := context.Background()
			tx := begin(t, w)
			for _, k := range []int{1, 2} {
				if err := put(ctx, tx, k); err != nil {
					t.Fatal(err)
				}
			}
			if err := tt.end(tx); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, keys(t, db)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			next := begin(t, w) // the writer was released
			if err := next.Rollback(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestWriteTxUseAfterEnd: every call on an ended transaction returns a
// TxError naming how it ended (errors.Is sql.ErrTxDone), and never runs
// inside the writer's next transaction.
func TestWriteTxUseAfterEnd(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		end    func(*WriteTx)
		reason string
	}{
		{"committed", func(tx *WriteTx) { tx.Commit() }, TxCommitted},
		{"rolled back", func(tx *WriteTx) { tx.Rollback() }, TxRolledBack},
		{"failed", func(tx *WriteTx) { put(ctx, tx, 1); put(ctx, tx, 1) }, TxFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := txDB(t, 0)
			w := txWriter(t, db)
			stale := begin(t, w)
			tt.end(stale)
			next := begin(t, w) // the stale one's calls must not land here
			calls := map[string]error{
				"exec":      put(ctx, stale, 7),
				"query":     queryErr(stale.QueryContext(ctx, `SELECT k FROM kv`)),
				"savepoint": stale.Savepoint(ctx, func() error { return put(ctx, stale, 8) }),
				"commit":    stale.Commit(),
				"rollback":  stale.Rollback(),
			}
			for op, err := range calls {
				var te *TxError
				if !errors.As(err, &te) || te.Reason != tt.reason || te.Op != op || !errors.Is(err, sql.ErrTxDone) {
					t.Errorf("%s after the end: %v, want a TxError %q", op, err, tt.reason)
				}
			}
			var n int
			if err := stale.QueryRowContext(ctx, `SELECT count(*) FROM kv`).Scan(&n); !errors.Is(err, sql.ErrTxDone) {
				t.Errorf("QueryRow after the end: %v, want sql.ErrTxDone", err)
			}
			if err := next.Commit(); err != nil {
				t.Fatalf("the next transaction: %v", err)
			}
			if got := keys(t, db); len(got) != 0 {
				t.Errorf("rows %v, want none: a stale call wrote", got)
			}
		})
	}
}

func queryErr(rows *sql.Rows, err error) error {
	if rows != nil {
		rows.Close()
	}
	return err
}

// TestWriteTxFailureRollsBack: a failed statement rolls the whole
// transaction back at once (its earlier writes too), later calls are
// refused with the cause, and the writer is free.
func TestWriteTxFailureRollsBack(t *testing.T) {
	db := txDB(t, 0)
	w := txWriter(t, db)
	ctx := context.Background()
	tx := begin(t, w)
	if err := put(ctx, tx, 1); err != nil {
		t.Fatal(err)
	}
	dup := put(ctx, tx, 1)
	if dup == nil {
		t.Fatal("duplicate key accepted")
	}
	var te *TxError
	if err := tx.Err(); !errors.As(err, &te) || te.Reason != TxFailed || te.Cause != dup {
		t.Errorf("Err after the failure = %v, want TxFailed caused by %v", err, dup)
	}
	if err := tx.Commit(); !errors.As(err, &te) || te.Reason != TxFailed {
		t.Errorf("Commit after the failure = %v, want TxFailed", err)
	}
	other := begin(t, w) // released at the failure, before Commit
	other.Rollback()
	if got := keys(t, db); len(got) != 0 {
		t.Errorf("rows %v, want none", got)
	}
}

// TestWriteTxCommitFailureRollsBack: a COMMIT that fails (a deferred
// foreign key: SQLite keeps the transaction open) is rolled back, and the
// connection is clean for the next transaction.
func TestWriteTxCommitFailureRollsBack(t *testing.T) {
	db := txDB(t, 0)
	w := txWriter(t, db)
	ctx := context.Background()
	tx := begin(t, w)
	put(ctx, tx, 1)
	if _, err := tx.ExecContext(ctx, `INSERT INTO child VALUES (99)`); err != nil {
		t.Fatal(err) // deferred: checked at COMMIT
	}
	if err := tx.Commit(); err == nil {
		t.Fatal("commit with a dangling foreign key succeeded")
	}
	if err := tx.Err(); err == nil {
		t.Error("transaction still open after a failed commit")
	}
	next := begin(t, w)
	if err := put(ctx, next, 2); err != nil {
		t.Fatal(err)
	}
	if err := next.Commit(); err != nil {
		t.Fatalf("next transaction: %v (connection left in the failed one?)", err)
	}
	if diff := cmp.Diff([]int{2}, keys(t, db)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// TestWriteTxContextDone: once Begin's or a statement's context is done,
// the transaction rolls back instead of running or committing.
func TestWriteTxContextDone(t *testing.T) {
	tests := []struct {
		name string
		run  func(ctx context.Context, cancel func(), tx *WriteTx) error
	}{
		{"statement context", func(ctx context.Context, _ func(), tx *WriteTx) error {
			done, cancel := context.WithCancel(ctx)
			cancel()
			return put(done, tx, 2)
		}},
		{"begin context, next statement", func(ctx context.Context, cancel func(), tx *WriteTx) error {
			cancel()
			return put(context.Background(), tx, 2)
		}},
		{"begin context, commit", func(ctx context.Context, cancel func(), tx *WriteTx) error {
			cancel()
			return tx.Commit()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := txDB(t, 0)
			w := txWriter(t, db)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tx, err := w.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			put(ctx, tx, 1)
			if err := tt.run(ctx, cancel, tx); !errors.Is(err, context.Canceled) {
				t.Errorf("got %v, want context.Canceled", err)
			}
			if tx.Commit() == nil {
				t.Error("committed after its context was done")
			}
			if got := keys(t, db); len(got) != 0 {
				t.Errorf("rows %v, want none", got)
			}
		})
	}
}

// TestWriteTxSavepoint: a savepoint undoes only what fn wrote — on its
// error or on a statement failing inside it — and the transaction goes
// on to commit the rest.
func TestWriteTxSavepoint(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	tests := []struct {
		name    string
		fn      func(tx *WriteTx) error
		wantErr error // nil: none; else errors.Is, or any error when errAny
		want    []int
	}{
		{"kept", func(tx *WriteTx) error { return put(ctx, tx, 5) }, nil, []int{1, 5, 9}},
		{"fn error undoes its writes", func(tx *WriteTx) error { put(ctx, tx, 5); return boom }, boom, []int{1, 9}},
		{"failed statement undone", func(tx *WriteTx) error { put(ctx, tx, 5); return put(ctx, tx, 1) }, errAny, []int{1, 9}},
		{"failure ignored by fn is undone anyway", func(tx *WriteTx) error { put(ctx, tx, 5); put(ctx, tx, 1); return nil }, errAny, []int{1, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := txDB(t, 0)
			w := txWriter(t, db)
			tx := begin(t, w)
			put(ctx, tx, 1)
			err := tx.Savepoint(ctx, func() error { return tt.fn(tx) })
			if !matches(err, tt.wantErr) {
				t.Errorf("Savepoint = %v, want %v", err, tt.wantErr)
			}
			if err := tx.Err(); err != nil {
				t.Fatalf("transaction ended by the savepoint: %v", err)
			}
			if err := put(ctx, tx, 9); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, keys(t, db)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

var errAny = errors.New("any error")

func matches(err, want error) bool {
	switch want {
	case nil:
		return err == nil
	case errAny:
		return err != nil
	}
	return errors.Is(err, want)
}

// TestWriterSerialises: concurrent read-modify-write transactions on one
// writer never overlap and lose no update.
func TestWriterSerialises(t *testing.T) {
	db := txDB(t, 0)
	w := txWriter(t, db)
	ctx := context.Background()
	if _, err := db.SQL().Exec(`INSERT INTO kv VALUES (0, 0)`); err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 25
	var inside, overlap atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Go(func() {
			for range each {
				errs <- increment(ctx, w, &inside, &overlap)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var v int64
	db.SQL().QueryRow(`SELECT v FROM kv WHERE k = 0`).Scan(&v)
	if got, want := [2]int64{v, overlap.Load()}, [2]int64{workers * each, 0}; got != want {
		t.Errorf("counter, overlapping transactions = %v, want %v", got, want)
	}
}

func increment(ctx context.Context, w *Writer, inside, overlap *atomic.Int64) error {
	tx, err := w.Begin(ctx)
	if err != nil {
		return err
	}
	if inside.Add(1) > 1 {
		overlap.Add(1)
	}
	err = bump(ctx, tx)
	inside.Add(-1) // before the end releases the writer
	if err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func bump(ctx context.Context, tx Tx) error {
	var v int64
	if err := tx.QueryRowContext(ctx, `SELECT v FROM kv WHERE k = 0`).Scan(&v); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE kv SET v = ? WHERE k = 0`, v+1)
	return err
}

// TestWriterClose: Close waits for the transaction in progress, and Begin
// after Close is refused.
func TestWriterClose(t *testing.T) {
	db := txDB(t, 0)
	w := txWriter(t, db)
	ctx := context.Background()
	tx := begin(t, w)
	closed := make(chan error)
	go func() { closed <- w.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) during a transaction", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := put(ctx, tx, 1); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := w.Begin(ctx); !errors.Is(err, ErrWriterClosed) {
		t.Errorf("Begin after Close = %v, want ErrWriterClosed", err)
	}
	if diff := cmp.Diff([]int{1}, keys(t, db)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// TestBeginLockedElsewhere: a Begin that cannot get the write lock (held
// by another connection past the busy timeout) fails and holds nothing.
func TestBeginLockedElsewhere(t *testing.T) {
	db := txDB(t, 20*time.Millisecond)
	w := txWriter(t, db)
	ctx := context.Background()
	other, err := db.SQL().BeginTx(ctx, nil) // BEGIN IMMEDIATE on another connection
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Begin(ctx); err == nil {
		t.Fatal("Begin succeeded while another connection held the write lock")
	}
	other.Rollback()
	tx := begin(t, w)
	if err := put(ctx, tx, 1); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestStmtRunsInEitherTx: a Stmt runs on the pool and inside both kinds
// of transaction, seeing each one's own writes.
func TestStmtRunsInEitherTx(t *testing.T) {
	db := txDB(t, 0)
	w := txWriter(t, db)
	ctx := context.Background()
	ins, err := Prepare(ctx, db.SQL(), `INSERT INTO kv VALUES (?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	get, err := Prepare(ctx, db.SQL(), `SELECT v FROM kv WHERE k = ?`)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []func() Tx{
		func() Tx {
			tx, err := db.SQL().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			return tx
		},
		func() Tx { return begin(t, w) },
		func() Tx { return nil }, // the pool
	}
	for i, kind := range kinds {
		tx := kind()
		if _, err := ins.Exec(ctx, tx, i, 10*i); err != nil {
			t.Fatalf("%T: %v", tx, err)
		}
		var v int
		if err := get.QueryRow(ctx, tx, i).Scan(&v); err != nil || v != 10*i {
			t.Errorf("%T: read %d, %v; want %d", tx, v, err, 10*i)
		}
		if tx != nil {
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if diff := cmp.Diff([]int{0, 1, 2}, keys(t, db)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// TestWriterPreparesOnce: a query is prepared once per writer, and past
// maxStmts distinct queries run unprepared instead of growing the cache.
func TestWriterPreparesOnce(t *testing.T) {
	db := txDB(t, 0)
	w := txWriter(t, db)
	ctx := context.Background()
	for i := range 3 {
		tx := begin(t, w)
		put(ctx, tx, i)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(w.stmts); got != 1 {
		t.Errorf("%d statements prepared for one query, want 1", got)
	}
	tx := begin(t, w)
	for i := range maxStmts + 5 {
		q := fmt.Sprintf(`UPDATE kv SET v = %d WHERE k = 0`, i)
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := len(w.stmts); got != maxStmts {
		t.Errorf("%d statements cached, want the bound %d", got, maxStmts)
	}
}
