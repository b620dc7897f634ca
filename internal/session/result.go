package session

import (
	"context"
	"database/sql"
	"errors"
)

// Result is a turn's recorded outcome, for polling a background turn from
// any connection.
type Result struct {
	SessionHandle string `json:"sessionHandle"`
	TurnInfo
	// Output is the archived answer (redacted); "" while running or when
	// history was evicted or not kept.
	Output string `json:"output"`
	// HistoryAvailable reports whether Output came from the archive.
	HistoryAvailable bool `json:"historyAvailable"`
}

// Result returns turn n of the session (0 = the last one).
func (s *Store) Result(ctx context.Context, workspace, handle string, n int) (Result, error) {
	r, err := s.lookup(ctx, workspace, handle)
	if err != nil {
		return Result{}, err
	}
	if n <= 0 {
		n = r.turns
	}
	if n == 0 || n > r.turns {
		return Result{}, errNoTurn
	}
	t, err := s.turnInfo(ctx, handle, n)
	if err != nil {
		return Result{}, storageErr(err)
	}
	res := Result{SessionHandle: handle, TurnInfo: t}
	if t.Status == "running" {
		return res, nil
	}
	err = s.db.QueryRowContext(ctx, `SELECT body FROM messages WHERE handle = ? AND turn = ? AND role = 'assistant'
		ORDER BY seq DESC LIMIT 1`, handle, n).Scan(&res.Output)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Result{}, storageErr(err)
	}
	res.HistoryAvailable = err == nil
	return res, nil
}
