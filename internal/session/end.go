package session

import (
	"context"

	"github.com/coagent8/coagent8/internal/turn"
)

// finish is End's transaction: message, turn row, session row.
func (s *Store) finish(ctx context.Context, l *lease, e turn.End, body string, complete bool) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := s.materialize(ctx, tx, l.handle, l.n, body, complete); err != nil {
		return err
	}
	if err := s.release(ctx, tx, l, e); err != nil {
		return err
	}
	return tx.Commit()
}

// release records the turn's end and frees the session's lease.
func (s *Store) release(ctx context.Context, q querier, l *lease, e turn.End) error {
	_, err := q.ExecContext(ctx, `UPDATE turns SET status = ?, model = CASE WHEN ? != '' THEN ? ELSE model END,
		err_code = ?, reason = ?, ended_at = ? WHERE handle = ? AND turn = ?`,
		string(e.Status), e.Model, e.Model, e.ErrCode, e.Reason, s.ms(), l.handle, l.n)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `UPDATE sessions SET lease_owner = '', cancel_req = 0, last_used_at = ?,
		native_id = CASE WHEN ? != '' THEN ? ELSE native_id END,
		model = CASE WHEN ? != '' THEN ? ELSE model END WHERE handle = ? AND lease_owner = ?`,
		s.ms(), e.NativeID, e.NativeID, e.Model, e.Model, l.handle, s.instance)
	return err
}

// releaseOnly retries just the in-place updates after the full write
// failed (e.g. the disk is full and the message cannot be inserted). If
// this fails too, the row keeps this instance as owner, which the store
// treats as free once the turn is untracked.
func (s *Store) releaseOnly(ctx context.Context, l *lease, e turn.End) {
	if err := s.release(ctx, s.db, l, e); err != nil {
		s.log.Warn("session lease release not archived", "error", err.Error())
	}
}

// bestEffortNative saves the native id of a turn that ran unarchived, so
// the session can continue if the archive recovered meanwhile.
func (s *Store) bestEffortNative(ctx context.Context, l *lease, e turn.End) {
	if l.handle == "" || e.NativeID == "" {
		return
	}
	_, err := s.db.ExecContext(ctx, `UPDATE sessions SET native_id = ?, turn_count = MAX(turn_count, ?), last_used_at = ?
		WHERE handle = ?`, e.NativeID, l.n, s.ms(), l.handle)
	if err != nil {
		s.log.Warn("session native id not archived", "error", err.Error())
	}
}
