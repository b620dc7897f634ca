package ledger

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/store"
)

// Component is the store component name owning the egress tables.
const Component = "egress"

var migrations = []store.Migration{{Version: 1, SQL: `
CREATE TABLE egress_host (one INTEGER PRIMARY KEY CHECK (one = 1), host TEXT NOT NULL);
CREATE TABLE egress_account (
	host TEXT NOT NULL, purpose TEXT NOT NULL,
	max_uses INTEGER NOT NULL CHECK (max_uses > 0), max_bytes INTEGER NOT NULL CHECK (max_bytes > 0),
	used_uses INTEGER NOT NULL DEFAULT 0, used_bytes INTEGER NOT NULL DEFAULT 0,
	created TEXT NOT NULL,
	PRIMARY KEY (host, purpose),
	CHECK (used_uses <= max_uses AND used_bytes <= max_bytes));
CREATE TABLE egress_record (id INTEGER PRIMARY KEY, at TEXT NOT NULL, purpose TEXT NOT NULL,
	effect TEXT NOT NULL, reason TEXT NOT NULL, bytes INTEGER NOT NULL DEFAULT 0, evidence TEXT NOT NULL);
`}, {Version: 2, SQL: `
-- Refusal records are limited per job (internal/egress, refusallimit.go):
-- suppressed counts the refusals of the job left out since its previous
-- row, or, on an egress.refusals_suppressed row, left out at its end.
ALTER TABLE egress_record ADD COLUMN suppressed INTEGER NOT NULL DEFAULT 0;
`}}

// Errors a claim can be refused with. Each is a refusal: nothing is sent.
var (
	ErrConfigConflict = errors.New("configured ceilings disagree with the retained account")
	ErrUsesExhausted  = errors.New("disclosure uses exhausted")
	ErrBytesExhausted = errors.New("disclosure bytes exhausted")
)

// Ceiling is a purpose's cumulative disclosure capacity. Both must be
// positive: there is no unlimited account.
type Ceiling struct {
	Uses  int64
	Bytes int64
}

// Ledger is the disclosure ledger of one database. Safe for concurrent
// use (SQLite serializes the write transactions).
type Ledger struct {
	writeMu sync.Mutex // serialises this process's own claims (Claim)

	db    *sql.DB
	host  string
	now   func() time.Time
	stmts stmts
}

// stmts are the claim's statements, prepared once: parsing SQL was about
// a third of a claim's cost (issue 9 benchmark).
type stmts struct {
	consume, record *store.Stmt
}

func (l *Ledger) prepare(ctx context.Context) (err error) {
	l.stmts.consume, err = store.Prepare(ctx, l.db, `UPDATE egress_account
		SET used_uses = used_uses + 1, used_bytes = used_bytes + ?1
		WHERE host = ?2 AND purpose = ?3 AND max_uses = ?4 AND max_bytes = ?5
		AND used_uses + 1 <= max_uses AND used_bytes + ?1 <= max_bytes`)
	if err != nil {
		return fmt.Errorf("prepare disclosure claim: %w", err)
	}
	l.stmts.record, err = store.Prepare(ctx, l.db, `INSERT INTO egress_record(at, purpose, effect, reason, bytes, evidence, suppressed)
		VALUES(?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("prepare disclosure record: %w", err)
	}
	return nil
}

// Shares reports whether db is the ledger's own handle, so that a
// transaction begun on it (or on one of its [sql.Conn]s) can carry
// [Ledger.ClaimTx].
func (l *Ledger) Shares(db *sql.DB) bool { return db == l.db }

// Open migrates the egress tables of db and loads (or mints) the host
// identity. now nil means time.Now.
func Open(ctx context.Context, db *store.DB, now func() time.Time) (*Ledger, error) {
	if err := db.Migrate(ctx, Component, migrations); err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	l := &Ledger{db: db.SQL(), now: now}
	h, err := l.hostID(ctx)
	if err != nil {
		return nil, err
	}
	l.host = h
	return l, l.prepare(ctx)
}

func (l *Ledger) hostID(ctx context.Context) (string, error) {
	b := make([]byte, 16)
	rand.Read(b)
	_, err := l.db.ExecContext(ctx, `INSERT INTO egress_host(one, host) VALUES(1, ?) ON CONFLICT(one) DO NOTHING`, hex.EncodeToString(b))
	if err != nil {
		return "", fmt.Errorf("egress host identity: %w", err)
	}
	var h string
	if err := l.db.QueryRowContext(ctx, `SELECT host FROM egress_host WHERE one = 1`).Scan(&h); err != nil {
		return "", fmt.Errorf("egress host identity: %w", err)
	}
	return h, nil
}

// Host returns the ledger's stable host identity (random, opaque).
func (l *Ledger) Host() string { return l.host }

// Remaining returns the ceiling and what is left of purpose's account;
// ok is false when the account was never opened.
func (l *Ledger) Remaining(ctx context.Context, purpose string) (c, left Ceiling, ok bool, err error) {
	var uu, ub int64
	err = l.db.QueryRowContext(ctx, `SELECT max_uses, max_bytes, used_uses, used_bytes FROM egress_account
		WHERE host = ? AND purpose = ?`, l.host, purpose).Scan(&c.Uses, &c.Bytes, &uu, &ub)
	if errors.Is(err, sql.ErrNoRows) {
		return Ceiling{}, Ceiling{}, false, nil
	}
	if err != nil {
		return Ceiling{}, Ceiling{}, false, fmt.Errorf("read disclosure account: %w", err)
	}
	return c, Ceiling{c.Uses - uu, c.Bytes - ub}, true, nil
}
