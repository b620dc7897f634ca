// Package store opens coagent8's one embedded SQLite database (pure Go,
// modernc.org/sqlite): WAL journal, foreign keys on, a busy timeout, and
// schema migrations embedded in the binary and applied per component.
//
// Each component (sessions, gate, egress, ...) owns its tables and its
// ordered list of migrations ([Migration]); [DB.Migrate] records the applied
// version per component in the schema_versions table, inside one
// transaction per step. Callers get a *sql.DB and keep SQL in their own
// package, so a server database can later implement the same component
// interfaces without touching callers.
//
// Code that writes inside a caller's transaction takes a [Tx], which the
// pool's *sql.Tx and a [Writer]'s [WriteTx] both are; a Writer pins one
// connection for a process's hot-path writes and runs its transactions
// on statements prepared once on it ([Stmt] for statements that also run
// on the pool).
//
// A database that cannot be opened or fails its integrity check is reported
// with its path and never deleted or recreated (issue 6, bad input).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is an open database. It is safe for concurrent use.
type DB struct {
	sql  *sql.DB
	path string
}

// Migration is one ordered schema step of a component. Version starts at 1
// and increases by one; SQL may hold several statements.
type Migration struct {
	Version int
	SQL     string
}

// Open opens (creating with mode 0600 if needed) the database at path, in a
// directory created with mode 0700. busy is how long a writer waits for a
// lock held by another connection or process (0 = 5 s). It is
// [OpenOptions] with only Busy set.
func Open(ctx context.Context, path string, busy time.Duration) (*DB, error) {
	return OpenOptions(ctx, path, Options{Busy: busy})
}

// Options configure [OpenOptions]. The zero value is [Open]'s behaviour.
type Options struct {
	// Busy is how long a writer waits for a lock held by another
	// connection or process (0 = 5 s).
	Busy time.Duration
	// CacheKiB bounds each connection's SQLite page cache, in KiB
	// (PRAGMA cache_size = -CacheKiB on every connection the pool opens).
	// 0 keeps SQLite's default of 2,000 KiB. A small cache suits a
	// long-lived, read-mostly process that holds connections while idle
	// (the operator dashboard, issue 17: idle RSS): every connection
	// fills its own cache, the integrity check at open reads the whole
	// file through one, and the pure-Go SQLite's allocator keeps up to
	// 4 MiB of what a closed connection freed. Pages not cached are read
	// again from the OS page cache. Negative values are an error.
	CacheKiB int
}

// OpenOptions is [Open] with options: it opens (creating with mode 0600
// if needed) the database at path, in a directory created with mode
// 0700, and runs the integrity check. A negative o.CacheKiB is an
// error naming it.
func OpenOptions(ctx context.Context, path string, o Options) (*DB, error) {
	if o.Busy <= 0 {
		o.Busy = 5 * time.Second
	}
	if o.CacheKiB < 0 {
		return nil, fmt.Errorf("open database %s: cache size %d KiB is negative", path, o.CacheKiB)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	if err := touch(path); err != nil {
		return nil, err
	}
	dsn := fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate",
		uriPath(path), o.Busy.Milliseconds())
	if o.CacheKiB > 0 {
		// The driver runs each _pragma on every new connection, before
		// the pool hands it out (the integrity check's included).
		dsn += fmt.Sprintf("&_pragma=cache_size(-%d)", o.CacheKiB)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	d := &DB{sql: db, path: path}
	if err := d.check(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return d, nil
}

// uriPath is path as the path of a SQLite URI filename: '?' would end
// it (the driver takes the query from the first one), '#' starts a
// fragment SQLite drops, and '%' starts an escape SQLite decodes. A state
// directory named "a#b" opened the database at "a" instead: another
// file, possibly shared, outside the directory created with mode 0700.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)
}

func touch(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open database %s: %w", path, err)
	}
	return f.Close()
}

// ErrCorrupt reports a database that failed its integrity check.
var ErrCorrupt = errors.New("database is corrupted")

func (d *DB) check(ctx context.Context) error {
	var res string
	if err := d.sql.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&res); err != nil {
		return fmt.Errorf("check database %s: %w (the file was left untouched)", d.path, err)
	}
	if res != "ok" {
		return fmt.Errorf("check database %s: %w: %s (the file was left untouched)", d.path, ErrCorrupt, res)
	}
	_, err := d.sql.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_versions (
		component TEXT PRIMARY KEY, version INTEGER NOT NULL)`)
	if err != nil {
		return fmt.Errorf("prepare database %s: %w", d.path, err)
	}
	return nil
}

// SQL returns the underlying handle.
func (d *DB) SQL() *sql.DB { return d.sql }

// Path returns the database file path.
func (d *DB) Path() string { return d.path }

// Close closes the database.
func (d *DB) Close() error { return d.sql.Close() }

// Migrate applies the component's migrations above its recorded version, in
// order, each in its own transaction. A recorded version above the highest
// known one (a newer binary wrote the file) is an error: never downgrade.
func (d *DB) Migrate(ctx context.Context, component string, steps []Migration) error {
	cur, err := d.version(ctx, component)
	if err != nil {
		return err
	}
	if len(steps) > 0 && cur > steps[len(steps)-1].Version {
		return fmt.Errorf("migrate %s: database version %d is newer than this binary (%d)", component, cur, steps[len(steps)-1].Version)
	}
	for i, m := range steps {
		if m.Version != i+1 {
			return fmt.Errorf("migrate %s: step %d has version %d", component, i, m.Version)
		}
		if m.Version <= cur {
			continue
		}
		if err := d.apply(ctx, component, m); err != nil {
			return err
		}
	}
	return nil
}

func (d *DB) version(ctx context.Context, component string) (int, error) {
	var v int
	err := d.sql.QueryRowContext(ctx, "SELECT version FROM schema_versions WHERE component = ?", component).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read schema version of %s: %w", component, err)
	}
	return v, nil
}

func (d *DB) apply(ctx context.Context, component string, m Migration) error {
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate %s to %d: %w", component, m.Version, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("migrate %s to %d: %w", component, m.Version, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO schema_versions(component, version) VALUES(?, ?)
		ON CONFLICT(component) DO UPDATE SET version = excluded.version`, component, m.Version)
	if err != nil {
		return fmt.Errorf("migrate %s to %d: %w", component, m.Version, err)
	}
	return tx.Commit()
}
