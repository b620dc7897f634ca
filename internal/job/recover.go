package job

import (
	"context"
	"time"
)

// recover fails running jobs whose supervisor is gone, after verifying
// that no process of their sandbox survives (killing any that does), and
// expires candidates past their time. It runs on Open, before anything
// lists or admits.
func (s *Store) recover(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, supervisor_pid, supervisor_start FROM jobs WHERE state='running'`)
	if err != nil {
		return err
	}
	var dead []string
	for rows.Next() {
		var id string
		var pid int
		var start int64
		if err := rows.Scan(&id, &pid, &start); err != nil {
			rows.Close()
			return err
		}
		if !alive(pid, start) {
			dead = append(dead, id)
		}
	}
	rows.Close()
	now := s.now().UnixMilli()
	for _, id := range dead {
		// A job is reported failed with its tree verified gone (issue 16
		// scope 6); one whose tree could not be ended says so instead.
		reason := ReasonSupervisorGone
		if !endTree(id) {
			reason = ReasonTreeSurvived
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE jobs SET state='failed', reason=?, updated_at=? WHERE id=? AND state='running'`,
			reason, now, id); err != nil {
			return err
		}
	}
	return s.expire(ctx, s.now())
}

// alive reports whether the process pid still is the one that started at
// start; an unreadable start time counts as gone (fail closed).
func alive(pid int, start int64) bool {
	got, err := startTime(pid)
	return err == nil && got == start
}

// expire marks admissible candidates past their expiry as expired.
func (s *Store) expire(ctx context.Context, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET state='expired', reason=?, patch=NULL, message=NULL, updated_at=?
		WHERE state IN ('succeeded','tainted') AND expires_at <= ?`, ReasonExpired, now.UnixMilli(), now.UnixMilli())
	return err
}
