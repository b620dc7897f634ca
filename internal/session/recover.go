package session

import (
	"context"
	"database/sql"
	"os"
	"strings"
)

// ReasonServerExit is the reason recorded for a turn whose server died.
const ReasonServerExit = "server_exit"

// alive reports whether the server instance owning a lease still runs:
// its lock file is held. A dead owner's lock is returned held, so the
// caller can recover its rows before anyone else does; release it with
// [Store.bury].
func (s *Store) alive(owner string) (bool, *lockFile) {
	if owner == s.instance {
		return true, nil
	}
	if !validInstance(owner) {
		return false, nil
	}
	l, ok, err := tryLock(s.lockPath(owner))
	if err != nil {
		// Cannot tell (e.g. a read-only state directory): treat as alive,
		// which is safe (SESSION_BUSY), never a double lease.
		return true, nil
	}
	return !ok, l
}

func validInstance(id string) bool {
	return len(id) == 16 && strings.Trim(id, "0123456789abcdef") == ""
}

// bury releases and removes a dead instance's lock file after recovery.
func (s *Store) bury(owner string, l *lockFile) {
	if l == nil {
		return
	}
	os.Remove(s.lockPath(owner))
	l.unlock()
}

// recoverDead recovers every lease and running turn of dead instances.
func (s *Store) recoverDead(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT owner FROM turns WHERE status = 'running'
		UNION SELECT DISTINCT lease_owner FROM sessions WHERE lease_owner != ''`)
	if err != nil {
		return err
	}
	var owners []string
	for rows.Next() {
		var o string
		if rows.Scan(&o) == nil {
			owners = append(owners, o)
		}
	}
	rows.Close()
	for _, o := range owners {
		if err := s.recoverIfDead(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// recoverIfDead frees the owner's leases if it is dead; it reports
// nothing when the owner is alive.
func (s *Store) recoverIfDead(ctx context.Context, owner string) error {
	live, l := s.alive(owner)
	if live {
		return nil
	}
	defer s.bury(owner, l)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := s.failRunning(ctx, tx, owner); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET lease_owner = '', cancel_req = 0
		WHERE lease_owner = ?`, owner); err != nil {
		return err
	}
	s.log.Info("recovered turns of a dead server instance", "instance", owner)
	return tx.Commit()
}

// failRunning marks the owner's running turns failed/server_exit and keeps
// what they had streamed as an incomplete assistant message.
func (s *Store) failRunning(ctx context.Context, tx *sql.Tx, owner string) error {
	rows, err := tx.QueryContext(ctx, `SELECT handle, turn FROM turns WHERE status = 'running' AND owner = ?`, owner)
	if err != nil {
		return err
	}
	type key struct {
		h string
		n int
	}
	var ks []key
	for rows.Next() {
		var k key
		if rows.Scan(&k.h, &k.n) == nil {
			ks = append(ks, k)
		}
	}
	rows.Close()
	for _, k := range ks {
		partial, err := streamed(ctx, tx, k.h, k.n)
		if err != nil {
			return err
		}
		if err := s.materialize(ctx, tx, k.h, k.n, partial, false); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE turns SET status = 'failed', err_code = 'PROCESS_ERROR',
			reason = ?, ended_at = ? WHERE handle = ? AND turn = ?`, ReasonServerExit, s.ms(), k.h, k.n); err != nil {
			return err
		}
	}
	return nil
}

// streamed returns the delta chunks of a turn, concatenated in order.
func streamed(ctx context.Context, q querier, handle string, n int) (string, error) {
	rows, err := q.QueryContext(ctx, `SELECT body FROM deltas WHERE handle = ? AND turn = ? ORDER BY part`, handle, n)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var part string
		if err := rows.Scan(&part); err != nil {
			return "", err
		}
		b.WriteString(part)
	}
	return b.String(), rows.Err()
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}
