package session

import (
	"context"
	"database/sql"
)

// materialize replaces a turn's streamed delta chunks by one assistant
// message (complete or, after a failure, the partial text). Deleting the
// chunks in the same transaction lets SQLite reuse their pages, so the
// archive holds the answer once (AUD-P0-3).
func (s *Store) materialize(ctx context.Context, tx *sql.Tx, handle string, n int, body string, complete bool) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM deltas WHERE handle = ? AND turn = ?`, handle, n); err != nil {
		return err
	}
	return s.appendMessage(ctx, tx, handle, n, "assistant", body, complete)
}

// appendMessage adds one message, moves the session's revision (cursors
// taken before become HISTORY_CHANGED) and evicts oldest-first. An empty
// body adds nothing.
func (s *Store) appendMessage(ctx context.Context, tx *sql.Tx, handle string, n int, role, body string, complete bool) error {
	if body == "" {
		return nil
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO messages(handle, turn, role, body, bytes, complete, created_at)
		VALUES(?, ?, ?, ?, ?, ?, ?)`, handle, n, role, body, len(body), complete, s.ms())
	if err != nil {
		return err
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if err := bump(ctx, tx, handle); err != nil {
		return err
	}
	return s.evict(ctx, tx, handle, seq)
}

func bump(ctx context.Context, q querier, handle string) error {
	_, err := q.ExecContext(ctx, `UPDATE sessions SET revision = revision + 1 WHERE handle = ?`, handle)
	return err
}

// evict deletes the oldest messages (never the one just written, keep)
// until the session and the whole archive are within their limits.
func (s *Store) evict(ctx context.Context, tx *sql.Tx, handle string, keep int64) error {
	for {
		var size int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(bytes), 0) FROM messages WHERE handle = ?`, handle).Scan(&size); err != nil {
			return err
		}
		if size <= s.opts.SessionBytes {
			break
		}
		done, err := evictOne(ctx, tx, `WHERE handle = ? AND seq < ?`, handle, keep)
		if err != nil || done {
			return err
		}
	}
	for {
		var size int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(bytes), 0) FROM messages`).Scan(&size); err != nil {
			return err
		}
		if size <= s.opts.TotalBytes {
			return nil
		}
		done, err := evictOne(ctx, tx, `WHERE seq != ?`, keep)
		if err != nil || done {
			return err
		}
	}
}

// evictOne deletes the oldest message matching where; done reports that
// none was left to delete.
func evictOne(ctx context.Context, tx *sql.Tx, where string, args ...any) (done bool, err error) {
	var seq int64
	var handle string
	err = tx.QueryRowContext(ctx, `SELECT seq, handle FROM messages `+where+` ORDER BY seq LIMIT 1`, args...).Scan(&seq, &handle)
	if err == sql.ErrNoRows {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE seq = ?`, seq); err != nil {
		return false, err
	}
	return false, bump(ctx, tx, handle)
}

// prune deletes idle sessions (and their history) past the retention
// period. Failures are logged: pruning is housekeeping.
func (s *Store) prune(ctx context.Context) {
	cut := s.now().Add(-DefaultRetention).UnixMilli()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE last_used_at < ? AND lease_owner = ''`, cut); err != nil {
		s.log.Warn("session pruning failed", "error", err.Error())
	}
}
