package gate

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/coagent8/coagent8/internal/store"
)

// stmts are the gate's per-request statements, prepared once: parsing
// SQL was about a third of the SQLite time of a request (issue 9
// benchmark, CPU profile).
type stmts struct {
	get, live       *store.Stmt
	reserve, book   *store.Stmt
	settle, release *store.Stmt
}

func (s *stmts) prepare(ctx context.Context, db *sql.DB) error {
	for _, p := range []struct {
		dst **store.Stmt
		q   string
	}{
		{&s.get, `SELECT ` + grantCols + ` FROM gate_grants WHERE id = ?`},
		{&s.live, `SELECT count(*) FROM gate_grants WHERE id = ? AND state = ? AND expires_at > ?`},
		// The atomic check-and-reserve: live, unexpired, one request and
		// the worst case of this one left (see reserveTx).
		{&s.reserve, `UPDATE gate_grants SET requests = requests + 1,
			reserved_tokens = reserved_tokens + ?1, reserved_spend = reserved_spend + ?2
			WHERE id = ?3 AND state = 'live' AND expires_at > ?4 AND requests < max_requests
			AND tokens + reserved_tokens + ?1 <= max_tokens AND spend + reserved_spend + ?2 <= max_spend`},
		// Exec and LastInsertId rather than RETURNING: a result set costs
		// database/sql a Rows and a goroutine per call.
		{&s.book, `INSERT INTO gate_reservations (grant_id, created_at, tokens, spend, decision, route) VALUES (?, ?, ?, ?, ?, ?)`},
		// The reservation row must still be open and hold exactly what the
		// caller says it reserved; the grant's counters move by that.
		{&s.settle, `UPDATE gate_reservations SET settled_at = ?, outcome = ?, settled_tokens = ?,
			settled_spend = ?, attempt = ?, sent_at = COALESCE(?, sent_at) WHERE id = ? AND settled_at IS NULL AND grant_id = ? AND tokens = ? AND spend = ?`},
		{&s.release, `UPDATE gate_grants SET reserved_tokens = reserved_tokens - ?,
			reserved_spend = reserved_spend - ?, tokens = tokens + ?, spend = spend + ? WHERE id = ?`},
	} {
		st, err := store.Prepare(ctx, db, p.q)
		if err != nil {
			return fmt.Errorf("gate statement: %w", err)
		}
		*p.dst = st
	}
	return nil
}
