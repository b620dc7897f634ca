package session

import (
	"context"
	"database/sql"
	"errors"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/turn"
)

var (
	errInvalid = fault.New(fault.SessionInvalid, "session.unknown", "Unknown or expired session handle.")
	errBusy    = fault.New(fault.SessionBusy, "session.busy", "The session is running another turn; wait for it or cancel it.")
)

// row is the part of a session row that Begin and the tools need.
type row struct {
	workspace, backend, native, model, owner string
	closed                                   bool
	turns                                    int
	lastUsed, created                        int64
	revision                                 int64
}

func loadRow(ctx context.Context, q querier, handle string) (row, error) {
	var r row
	err := q.QueryRowContext(ctx, `SELECT workspace, backend, native_id, model, lease_owner, closed, turn_count,
		last_used_at, created_at, revision FROM sessions WHERE handle = ?`, handle).
		Scan(&r.workspace, &r.backend, &r.native, &r.model, &r.owner, &r.closed, &r.turns, &r.lastUsed, &r.created, &r.revision)
	if errors.Is(err, sql.ErrNoRows) {
		return row{}, errInvalid
	}
	return r, err
}

// Begin implements [turn.Sessions]. A storage failure does not fail the
// turn: it runs unarchived and End reports a warning (AUD-P1-3).
func (s *Store) Begin(ctx context.Context, b turn.Begin) (turn.Lease, error) {
	if b.Mode == "none" && b.Handle == "" {
		return noneLease{}, nil
	}
	if b.Handle != "" {
		if err := s.freeDeadLease(ctx, b.Handle); err != nil {
			return s.degraded(ctx, b, err)
		}
	}
	l, err := s.begin(ctx, b)
	var fe *fault.Error
	if errors.As(err, &fe) {
		return nil, err
	}
	if err != nil {
		return s.degraded(ctx, b, err)
	}
	return l, nil
}

// freeDeadLease recovers the session's lease if its owner died, before the
// lease transaction (recovery takes its own transaction).
func (s *Store) freeDeadLease(ctx context.Context, handle string) error {
	var owner string
	err := s.db.QueryRowContext(ctx, `SELECT lease_owner FROM sessions WHERE handle = ?`, handle).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) || owner == "" || owner == s.instance {
		return nil
	}
	if err != nil {
		return err
	}
	return s.recoverIfDead(ctx, owner)
}

func (s *Store) begin(ctx context.Context, b turn.Begin) (*lease, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	handle, native, n, err := s.acquire(ctx, tx, b)
	if err != nil {
		return nil, err
	}
	if err := s.appendMessage(ctx, tx, handle, n, "user", s.answer.String(b.Prompt), true); err != nil {
		return nil, err
	}
	l := s.newLease(handle, native, n, b.Cancel)
	if err := s.track(l); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		s.untrack(l)
		return nil, err
	}
	l.start()
	return l, nil
}

// acquire finds or creates the session row and takes its lease.
func (s *Store) acquire(ctx context.Context, tx *sql.Tx, b turn.Begin) (handle, native string, n int, err error) {
	handle = b.Handle
	if handle == "" && b.Mode == "auto" {
		handle = s.reusable(ctx, tx, b)
	}
	if handle == "" {
		handle = turn.NewHandle()
		_, err = tx.ExecContext(ctx, `INSERT INTO sessions(handle, workspace, backend, model, created_at, last_used_at)
			VALUES(?, ?, ?, ?, ?, ?)`, handle, b.Workspace, b.Backend, b.Model, s.ms(), s.ms())
		if err != nil {
			return "", "", 0, err
		}
	}
	r, err := loadRow(ctx, tx, handle)
	if err != nil {
		return "", "", 0, err
	}
	if err := s.usable(handle, r, b); err != nil {
		return "", "", 0, err
	}
	n = r.turns + 1
	if _, err = tx.ExecContext(ctx, `UPDATE sessions SET lease_owner = ?, cancel_req = 0, turn_count = ?, last_used_at = ?
		WHERE handle = ?`, s.instance, n, s.ms(), handle); err != nil {
		return "", "", 0, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO turns(handle, turn, status, owner, model, started_at) VALUES(?, ?, 'running', ?, ?, ?)`,
		handle, n, s.instance, b.Model, s.ms())
	return handle, r.native, n, err
}

// usable checks ownership (workspace and backend), expiry and the lease.
// A foreign or expired handle is SESSION_INVALID, indistinguishable from
// an unknown one (AUD-P1-8).
func (s *Store) usable(handle string, r row, b turn.Begin) error {
	if r.workspace != b.Workspace || r.backend != b.Backend || r.closed {
		return errInvalid
	}
	if r.owner != "" && (r.owner != s.instance || s.local(handle) != nil) {
		return errBusy
	}
	if s.now().UnixMilli()-r.lastUsed > s.opts.IdleTTL.Milliseconds() {
		return errInvalid
	}
	return nil
}

// reusable returns the newest idle session of the workspace and backend
// used within DefaultAutoReuse that has a native thread (session_mode auto).
func (s *Store) reusable(ctx context.Context, tx *sql.Tx, b turn.Begin) string {
	var h string
	err := tx.QueryRowContext(ctx, `SELECT handle FROM sessions WHERE workspace = ? AND backend = ? AND closed = 0
		AND lease_owner = '' AND native_id != '' AND last_used_at >= ? ORDER BY last_used_at DESC LIMIT 1`,
		b.Workspace, b.Backend, s.now().Add(-DefaultAutoReuse).UnixMilli()).Scan(&h)
	if err != nil {
		return ""
	}
	return h
}

func (s *Store) local(handle string) *lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[handle]
}

// track registers a running turn of this process; a second one on the
// same handle is SESSION_BUSY (the DB lease covers other processes).
func (s *Store) track(l *lease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.running[l.handle]; ok {
		return errBusy
	}
	s.running[l.handle] = l
	return nil
}

func (s *Store) untrack(l *lease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[l.handle] == l {
		delete(s.running, l.handle)
	}
}
