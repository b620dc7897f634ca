package operator

import (
	"context"
	"database/sql"
	"time"
)

// idleTTL mirrors internal/session's DefaultIdleTTL: a session idle this
// long is shown expired.
const idleTTL = 2 * time.Hour

// SessionRow is one durable session and its last turn.
type SessionRow struct {
	Handle, Backend, Model, State string
	Turns                         int
	Created, LastUsed             time.Time
	LastStatus, LastCode          string
}

// Workspace groups a workspace's sessions, most recently used first.
type Workspace struct {
	Path     string
	Sessions []SessionRow
}

// sessionsByWorkspace returns up to limit sessions grouped by workspace.
func sessionsByWorkspace(ctx context.Context, db *sql.DB, has map[string]bool, now time.Time, limit int) ([]Workspace, error) {
	if !has["sessions"] || !has["turns"] {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT s.handle, s.workspace, s.backend, s.model, s.closed, s.lease_owner,
		s.turn_count, s.created_at, s.last_used_at, COALESCE(t.status, ''), COALESCE(t.err_code, '')
		FROM sessions s LEFT JOIN turns t ON t.handle = s.handle AND t.turn = s.turn_count
		ORDER BY s.workspace, s.last_used_at DESC LIMIT ?`, limit)
	if err != nil {
		return nil, stateErr(err)
	}
	defer rows.Close()
	var out []Workspace
	for rows.Next() {
		var r SessionRow
		var ws, owner string
		var closed bool
		var created, used int64
		if err := rows.Scan(&r.Handle, &ws, &r.Backend, &r.Model, &closed, &owner, &r.Turns, &created, &used,
			&r.LastStatus, &r.LastCode); err != nil {
			return nil, stateErr(err)
		}
		r.Created, r.LastUsed = time.UnixMilli(created).UTC(), time.UnixMilli(used).UTC()
		r.State = sessionState(closed, owner, now.Sub(r.LastUsed))
		if len(out) == 0 || out[len(out)-1].Path != ws {
			out = append(out, Workspace{Path: ws})
		}
		out[len(out)-1].Sessions = append(out[len(out)-1].Sessions, r)
	}
	return out, stateErr(rows.Err())
}

// sessionState follows internal/session's Store.state.
func sessionState(closed bool, owner string, idle time.Duration) string {
	switch {
	case closed:
		return "closed"
	case owner != "":
		return "running"
	case idle > idleTTL:
		return "expired"
	}
	return "idle"
}
