package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestMigrateIsIdempotentAndOrdered(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state", "coagent8.db")
	db, err := Open(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	steps := []Migration{
		{1, "CREATE TABLE a(x INTEGER)"},
		{2, "ALTER TABLE a ADD COLUMN y TEXT"},
	}
	for i := 0; i < 2; i++ {
		if err := db.Migrate(ctx, "demo", steps); err != nil {
			t.Fatalf("migrate run %d: %v", i, err)
		}
	}
	if _, err := db.SQL().Exec("INSERT INTO a(x, y) VALUES(1, 'z')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Mode().Perm(), os.FileMode(0o600); got != want {
		t.Fatalf("mode = %v, want %v", got, want)
	}
	db, err = Open(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "demo", steps[:1]); err == nil {
		t.Fatal("downgrade accepted")
	}
}

func TestCorruptFileIsReportedAndKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coagent8.db")
	junk := []byte("SQLite format 3\x00" + string(make([]byte, 4000)))
	for i := range junk[16:] {
		junk[16+i] = byte(i * 7)
	}
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), path, 0)
	if err == nil {
		t.Fatal("corrupt database opened")
	}
	got, _ := os.ReadFile(path)
	if string(got) != string(junk) {
		t.Fatal("corrupt file was modified")
	}
	_ = errors.Unwrap(err)
}

// TestCacheKiB: every connection the pool opens gets the bounded page
// cache (issue 17: the operator's idle RSS), the zero value keeps
// SQLite's default, and a negative size is refused.
func TestCacheKiB(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		opts    Options
		want    int // PRAGMA cache_size
		wantErr bool
	}{
		{name: "default", opts: Options{}, want: -2000},
		{name: "bounded", opts: Options{CacheKiB: 64}, want: -64},
		{name: "negative", opts: Options{CacheKiB: -1}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := OpenOptions(ctx, filepath.Join(t.TempDir(), "state.db"), tc.opts)
			if tc.wantErr {
				if err == nil {
					db.Close()
					t.Fatal("OpenOptions succeeded, want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			// Two connections held at once: the second is a new one.
			var conns []*sql.Conn
			for range 2 {
				c, err := db.SQL().Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				conns = append(conns, c)
			}
			for i, c := range conns {
				var got int
				if err := c.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != tc.want {
					t.Errorf("connection %d: cache_size = %d, want %d", i, got, tc.want)
				}
			}
		})
	}
}

// TestOpenPathWithURICharacters: the database opens at exactly its path
// when a directory name holds '#', '?' or '%' (t.TempDir of a subtest
// named "x#01" does): the URI form of the path once truncated it at '#',
// and every such test shared one database file outside its directory.
func TestOpenPathWithURICharacters(t *testing.T) {
	for _, name := range []string{"run#01", "what?x=1", "pct%41", "all#?%"} {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, name)
			path := filepath.Join(dir, "state.db")
			db, err := Open(context.Background(), path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.SQL().Exec("CREATE TABLE marker (x)"); err != nil {
				t.Fatal(err)
			}
			db.Close()
			got, err := os.ReadDir(base)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Name() != name {
				t.Fatalf("%s holds %v; want only %q", base, got, name)
			}
			reopened, err := Open(context.Background(), path, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer reopened.Close()
			var n int
			if err := reopened.SQL().QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'marker'").Scan(&n); err != nil || n != 1 {
				t.Fatalf("table written through %s not found on reopening (n=%d, err=%v)", path, n, err)
			}
		})
	}
}
