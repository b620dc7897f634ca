package session

import (
	"context"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// CancelWait is how long Cancel waits for the turn to stop.
const CancelWait = 5 * time.Second

var errNoTurn = fault.New(fault.InvalidInput, "session.no_turn", "The session has no such turn.")

// Cancelled is the cancel tool's answer (contract.md §5). Cancelled is
// true only when a running turn was stopped (P3: never for a no-op).
type Cancelled struct {
	SchemaVersion int    `json:"schemaVersion"`
	SessionHandle string `json:"sessionHandle"`
	Cancelled     bool   `json:"cancelled"`
	Message       string `json:"message"`
}

// Cancel stops the session's running turn, whichever connection or server
// process of this state directory runs it: in this process by cancelling
// the turn's context, in another by a flag its lease polls. It waits up
// to CancelWait for the turn to record its end.
func (s *Store) Cancel(ctx context.Context, workspace, handle string) (Cancelled, error) {
	r, err := s.lookup(ctx, workspace, handle)
	if err != nil {
		return Cancelled{}, err
	}
	out := Cancelled{SchemaVersion: 1, SessionHandle: handle}
	if l := s.local(handle); l != nil {
		return s.cancelLocal(ctx, l, out), nil
	}
	if r.owner == "" || r.owner == s.instance {
		out.Message = "No turn is running in this session; nothing was cancelled."
		return out, nil
	}
	return s.cancelRemote(ctx, handle, r.owner, out)
}

func (s *Store) cancelLocal(ctx context.Context, l *lease, out Cancelled) Cancelled {
	if l.cancel != nil {
		l.cancel(errCancelled)
	}
	select {
	case <-l.done:
		out.Cancelled, out.Message = true, "The running turn was cancelled and its process tree stopped."
	case <-time.After(CancelWait):
		out.Cancelled, out.Message = true, "Cancellation was signalled; the turn is still stopping."
	case <-ctx.Done():
		out.Cancelled, out.Message = true, "Cancellation was signalled."
	}
	return out
}

// cancelRemote flags the turn of another live server process and waits
// for its lease to be released.
func (s *Store) cancelRemote(ctx context.Context, handle, owner string, out Cancelled) (Cancelled, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE sessions SET cancel_req = 1 WHERE handle = ? AND lease_owner = ?`, handle, owner)
	if err != nil {
		return Cancelled{}, storageErr(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		out.Message = "No turn is running in this session; nothing was cancelled."
		return out, nil
	}
	deadline := time.Now().Add(CancelWait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var cur string
		if err := s.db.QueryRowContext(ctx, `SELECT lease_owner FROM sessions WHERE handle = ?`, handle).Scan(&cur); err == nil && cur != owner {
			out.Cancelled, out.Message = true, "The running turn was cancelled and its process tree stopped."
			return out, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	out.Cancelled, out.Message = true, "Cancellation was signalled; the turn is still stopping."
	return out, nil
}
