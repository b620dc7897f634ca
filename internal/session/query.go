package session

import (
	"context"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// validHandle reports whether h has the accepted handle shape
// ^syn_sess_[A-Za-z0-9_-]{6,80}$ (contract.md §6). Checked by hand: a
// regexp in a package variable compiles at every process start (issue 8
// performance); handle_test.go checks the equivalence.
func validHandle(h string) bool {
	const prefix = "syn_sess_"
	rest, ok := strings.CutPrefix(h, prefix)
	if !ok || len(rest) < 6 || len(rest) > 80 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Info describes a session. It carries no workspace path: the caller
// named the workspace, and paths are not echoed (P3).
type Info struct {
	Handle                string    `json:"sessionHandle"`
	Backend               string    `json:"backend"`
	State                 string    `json:"state"` // idle | running | closed | expired
	Turns                 int       `json:"turnCount"`
	Model                 string    `json:"model,omitempty"`
	ContinuationAvailable bool      `json:"continuationAvailable"`
	CreatedAt             time.Time `json:"createdAt"`
	LastUsedAt            time.Time `json:"lastUsedAt"`
	LastTurn              *TurnInfo `json:"lastTurn,omitempty"`
}

// TurnInfo is one turn's recorded state.
type TurnInfo struct {
	Turn      int        `json:"turn"`
	Status    string     `json:"status"` // running | completed | failed | cancelled | timed_out
	Model     string     `json:"model,omitempty"`
	ErrorCode string     `json:"errorCode,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	StartedAt time.Time  `json:"startedAt"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
}

// lookup returns the session row if handle belongs to workspace; anything
// else is SESSION_INVALID. A lease held by a dead server is recovered
// first, so state never shows a ghost "running".
func (s *Store) lookup(ctx context.Context, workspace, handle string) (row, error) {
	if !validHandle(handle) {
		return row{}, errInvalid
	}
	r, err := loadRow(ctx, s.db, handle)
	if err != nil {
		return row{}, err
	}
	if r.workspace != workspace {
		return row{}, errInvalid
	}
	if r.owner != "" && r.owner != s.instance {
		if err := s.recoverIfDead(ctx, r.owner); err != nil {
			s.log.Warn("session recovery failed", "error", err.Error())
		}
		return loadRow(ctx, s.db, handle)
	}
	return r, nil
}

// List returns the workspace's sessions, most recently used first (at
// most 100).
func (s *Store) List(ctx context.Context, workspace string) ([]Info, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT handle FROM sessions WHERE workspace = ?
		ORDER BY last_used_at DESC LIMIT 100`, workspace)
	if err != nil {
		return nil, storageErr(err)
	}
	var handles []string
	for rows.Next() {
		var h string
		if rows.Scan(&h) == nil {
			handles = append(handles, h)
		}
	}
	rows.Close()
	out := []Info{}
	for _, h := range handles {
		if i, err := s.Status(ctx, workspace, h); err == nil {
			out = append(out, i)
		}
	}
	return out, nil
}

// Status describes one session of the workspace and its last turn.
func (s *Store) Status(ctx context.Context, workspace, handle string) (Info, error) {
	r, err := s.lookup(ctx, workspace, handle)
	if err != nil {
		return Info{}, err
	}
	i := Info{Handle: handle, Backend: r.backend, State: s.state(r), Turns: r.turns, Model: r.model,
		ContinuationAvailable: r.native != "" && s.state(r) == "idle",
		CreatedAt:             time.UnixMilli(r.created).UTC(), LastUsedAt: time.UnixMilli(r.lastUsed).UTC()}
	if r.turns > 0 {
		t, err := s.turnInfo(ctx, handle, r.turns)
		if err == nil {
			i.LastTurn = &t
		}
	}
	return i, nil
}

func (s *Store) state(r row) string {
	switch {
	case r.closed:
		return "closed"
	case r.owner != "":
		return "running"
	case s.now().UnixMilli()-r.lastUsed > s.opts.IdleTTL.Milliseconds():
		return "expired"
	}
	return "idle"
}

func (s *Store) turnInfo(ctx context.Context, handle string, n int) (TurnInfo, error) {
	t := TurnInfo{Turn: n}
	var started, ended int64
	err := s.db.QueryRowContext(ctx, `SELECT status, model, err_code, reason, started_at, ended_at FROM turns
		WHERE handle = ? AND turn = ?`, handle, n).Scan(&t.Status, &t.Model, &t.ErrorCode, &t.Reason, &started, &ended)
	if err != nil {
		return TurnInfo{}, err
	}
	t.StartedAt = time.UnixMilli(started).UTC()
	if ended > 0 {
		e := time.UnixMilli(ended).UTC()
		t.EndedAt = &e
	}
	return t, nil
}

// CloseSession closes an idle session of the workspace (SESSION_BUSY while a
// turn runs); deleteHistory also deletes its messages.
func (s *Store) CloseSession(ctx context.Context, workspace, handle string, deleteHistory bool) error {
	r, err := s.lookup(ctx, workspace, handle)
	if err != nil {
		return err
	}
	if r.owner != "" {
		return errBusy
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return storageErr(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE sessions SET closed = 1 WHERE handle = ? AND lease_owner = ''`, handle)
	if err != nil {
		return storageErr(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errBusy
	}
	if deleteHistory {
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE handle = ?`, handle); err != nil {
			return storageErr(err)
		}
		if err := bump(ctx, tx, handle); err != nil {
			return storageErr(err)
		}
	}
	return storageErr(tx.Commit())
}

// storageErr types a database failure for the tools (HISTORY_ERROR); the
// cause stays internal.
func storageErr(err error) error {
	if err == nil {
		return nil
	}
	return fault.Wrap(fault.HistoryError, "session.storage", "The session archive could not be read or written.", err).WithRetry()
}
