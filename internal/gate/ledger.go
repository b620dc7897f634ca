package gate

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/coagent8/coagent8/internal/store"
)

// component is the gate's name in the shared store's schema_versions.
const component = "gate"

// migrations create the gate's tables. Times are Unix nanoseconds; money is
// [NanoUSD]. Counters only grow: used_* on settlement, requests on
// admission; reserved_* go up at admission and back down at settlement.
var migrations = []store.Migration{{Version: 1, SQL: `
CREATE TABLE gate_grants (
	id TEXT PRIMARY KEY,
	phantom_hash BLOB NOT NULL UNIQUE,
	provider TEXT NOT NULL, model TEXT NOT NULL, job TEXT NOT NULL,
	secret_ref TEXT NOT NULL,
	state TEXT NOT NULL,
	created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
	price_in REAL NOT NULL, price_out REAL NOT NULL, price_cw REAL NOT NULL, price_cr REAL NOT NULL,
	out_ceiling INTEGER NOT NULL,
	max_requests INTEGER NOT NULL, max_tokens INTEGER NOT NULL, max_spend INTEGER NOT NULL,
	requests INTEGER NOT NULL DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0, spend INTEGER NOT NULL DEFAULT 0,
	reserved_tokens INTEGER NOT NULL DEFAULT 0, reserved_spend INTEGER NOT NULL DEFAULT 0,
	CHECK (requests <= max_requests)
);
CREATE TABLE gate_reservations (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	grant_id TEXT NOT NULL REFERENCES gate_grants(id),
	created_at INTEGER NOT NULL,
	tokens INTEGER NOT NULL, spend INTEGER NOT NULL,
	settled_at INTEGER, outcome TEXT, settled_tokens INTEGER, settled_spend INTEGER
);
CREATE INDEX gate_reservations_open ON gate_reservations(grant_id) WHERE settled_at IS NULL;
`}, {Version: 2, SQL: `
-- No query reads it, yet every reservation entered and left it: two of the
-- eight WAL pages a request wrote (issue 9 benchmark, 10-20 % of the
-- gate's SQLite time). Reservations are found by id.
DROP INDEX IF EXISTS gate_reservations_open;
`}, {Version: 3, SQL: `
-- Issue 18 scope 4: a reservation is one transmission attempt. attempt is
-- decided (admitted, in flight or never settled), completed, not_sent
-- (failed before its first byte) or uncertain (the connection was lost
-- after the first byte, or the gate cut it: charged in full unless the
-- provider's usage arrived); decision is the egress decision's
-- EvidenceDigest@1; sent_at when the request headers were written.
ALTER TABLE gate_reservations ADD COLUMN attempt TEXT NOT NULL DEFAULT 'decided';
ALTER TABLE gate_reservations ADD COLUMN decision TEXT NOT NULL DEFAULT '';
ALTER TABLE gate_reservations ADD COLUMN sent_at INTEGER;
`}, {Version: 4, SQL: `
-- Issue 18 scope 5: the long-context price tier (0 = none).
ALTER TABLE gate_grants ADD COLUMN long_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE gate_grants ADD COLUMN long_in REAL NOT NULL DEFAULT 0;
ALTER TABLE gate_grants ADD COLUMN long_out REAL NOT NULL DEFAULT 0;
ALTER TABLE gate_grants ADD COLUMN long_cw REAL NOT NULL DEFAULT 0;
ALTER TABLE gate_grants ADD COLUMN long_cr REAL NOT NULL DEFAULT 0;
`}, {Version: 5, SQL: `
-- Issue 18 scope 4: unmetered routes (token counting, model listing) have
-- attempt rows too, reserving nothing; route is "METHOD /path".
ALTER TABLE gate_reservations ADD COLUMN route TEXT NOT NULL DEFAULT '';
`}, {Version: 6, SQL: `
-- Issue 18 performance: without AUTOINCREMENT. Every admission wrote
-- sqlite_sequence too, one of the five or six WAL pages of the pre-send
-- transaction. Rows are never deleted, so the plain rowid is max(id)+1 as
-- before: ids stay unique and increasing (a rolled-back insert's id was
-- handed out again under AUTOINCREMENT too).
CREATE TABLE gate_reservations_v6 (
	id INTEGER PRIMARY KEY,
	grant_id TEXT NOT NULL REFERENCES gate_grants(id),
	created_at INTEGER NOT NULL,
	tokens INTEGER NOT NULL, spend INTEGER NOT NULL,
	settled_at INTEGER, outcome TEXT, settled_tokens INTEGER, settled_spend INTEGER,
	attempt TEXT NOT NULL DEFAULT 'decided',
	decision TEXT NOT NULL DEFAULT '',
	sent_at INTEGER,
	route TEXT NOT NULL DEFAULT ''
);
INSERT INTO gate_reservations_v6 (id, grant_id, created_at, tokens, spend, settled_at, outcome,
	settled_tokens, settled_spend, attempt, decision, sent_at, route)
	SELECT id, grant_id, created_at, tokens, spend, settled_at, outcome,
	settled_tokens, settled_spend, attempt, decision, sent_at, route FROM gate_reservations;
DROP TABLE gate_reservations;
ALTER TABLE gate_reservations_v6 RENAME TO gate_reservations;
`}}

// ledger keeps grants and reservations in the shared SQLite database.
// Hot-path writes go through w; reads use the pool.
type ledger struct {
	db *sql.DB
	w  *writer
	st stmts
}

func openLedger(ctx context.Context, db *store.DB) (*ledger, error) {
	if err := db.Migrate(ctx, component, migrations); err != nil {
		return nil, err
	}
	l := &ledger{db: db.SQL()}
	if err := l.st.prepare(ctx, l.db); err != nil {
		return nil, err
	}
	w, err := newWriter(ctx, l.db)
	if err != nil {
		return nil, err
	}
	l.w = w
	return l, nil
}

// close releases the writer connection.
func (l *ledger) close() error { return l.w.close() }

func newID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "g_" + hex.EncodeToString(b)
}

func (l *ledger) create(ctx context.Context, s Spec, p Price, hash []byte, now time.Time) (string, error) {
	id := newID()
	_, err := l.db.ExecContext(ctx, `INSERT INTO gate_grants (id, phantom_hash, provider, model, job,
		secret_ref, state, created_at, expires_at, price_in, price_out, price_cw, price_cr, out_ceiling,
		max_requests, max_tokens, max_spend, long_tokens, long_in, long_out, long_cw, long_cr)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		id, hash, s.Provider, s.Model, s.Job, s.Secret.String(), Live, now.UnixNano(), now.Add(s.TTL).UnixNano(),
		p.InputPerMTok, p.OutputPerMTok, p.CacheWritePerMTok, p.CacheReadPerMTok, s.OutputCeiling,
		s.MaxRequests, s.MaxTokens, s.MaxSpend,
		p.LongContextTokens, p.LongInputPerMTok, p.LongOutputPerMTok, p.LongCacheWritePerMTok, p.LongCacheReadPerMTok)
	if err != nil {
		return "", fmt.Errorf("create grant: %w", err)
	}
	return id, nil
}

const grantCols = `id, provider, model, job, secret_ref, state, created_at, expires_at,
	price_in, price_out, price_cw, price_cr, out_ceiling, max_requests, max_tokens, max_spend,
	requests, tokens, spend, reserved_tokens, reserved_spend, long_tokens, long_in, long_out, long_cw, long_cr`

func scanGrant(row interface{ Scan(...any) error }) (Grant, error) {
	var g Grant
	var created, expires int64
	err := row.Scan(&g.ID, &g.Provider, &g.Model, &g.Job, &g.SecretRef, &g.State, &created, &expires,
		&g.Price.InputPerMTok, &g.Price.OutputPerMTok, &g.Price.CacheWritePerMTok, &g.Price.CacheReadPerMTok,
		&g.Ceiling, &g.Limits.Requests, &g.Limits.Tokens, &g.Limits.Spend,
		&g.Used.Requests, &g.Used.Tokens, &g.Used.Spend, &g.Reserved.Tokens, &g.Reserved.Spend,
		&g.Price.LongContextTokens, &g.Price.LongInputPerMTok, &g.Price.LongOutputPerMTok,
		&g.Price.LongCacheWritePerMTok, &g.Price.LongCacheReadPerMTok)
	g.Created, g.Expires = time.Unix(0, created).UTC(), time.Unix(0, expires).UTC()
	return g, err
}

// ErrNoGrant reports an unknown grant id or phantom credential.
var ErrNoGrant = errors.New("no such grant")

// get reads grant id inside tx, or from the pool when tx is nil.
func (l *ledger) get(ctx context.Context, tx store.Tx, id string) (Grant, error) {
	g, err := scanGrant(l.st.get.QueryRow(ctx, tx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Grant{}, ErrNoGrant
	}
	return g, err
}

func (l *ledger) byHash(ctx context.Context, hash []byte) (Grant, []byte, error) {
	var stored []byte
	row := l.db.QueryRowContext(ctx, `SELECT phantom_hash, `+grantCols+` FROM gate_grants WHERE phantom_hash = ?`, hash)
	g, err := scanGrant(scanFunc(func(dst ...any) error { return row.Scan(append([]any{&stored}, dst...)...) }))
	if errors.Is(err, sql.ErrNoRows) {
		return Grant{}, nil, ErrNoGrant
	}
	return g, stored, err
}

type scanFunc func(...any) error

func (f scanFunc) Scan(dst ...any) error { return f(dst...) }

// setState moves a live grant to state; it reports whether it changed.
func (l *ledger) setState(ctx context.Context, id string, s State) (bool, error) {
	res, err := l.db.ExecContext(ctx, `UPDATE gate_grants SET state = ? WHERE id = ? AND state = ?`, s, id, Live)
	if err != nil {
		return false, fmt.Errorf("set grant state: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// stillLive reports whether grant id is live and unexpired at now, read
// inside tx or from the pool when tx is nil.
func (l *ledger) stillLive(ctx context.Context, tx store.Tx, id string, now time.Time) (bool, error) {
	var n int
	err := l.st.live.QueryRow(ctx, tx, id, Live, now.UnixNano()).Scan(&n)
	return n == 1, err
}
