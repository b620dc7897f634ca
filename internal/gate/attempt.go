package gate

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/store"
)

// AttemptState is where one transmission attempt stands (issue 18 scope
// 4; seed 001 "Transmission and redelivery"). Every upstream attempt —
// a client retry of identical bytes included — is its own attempt with
// its own egress decision.
type AttemptState string

// Attempt states.
const (
	AttemptDecided   AttemptState = "decided"   // admitted and reserved, nothing written yet (or never settled)
	AttemptSent      AttemptState = "sent"      // first byte written upstream, not settled yet (recorded within WatchInterval)
	AttemptCompleted AttemptState = "completed" // a response came back (any status), settled
	AttemptNotSent   AttemptState = "not_sent"  // failed before its first byte: charged no tokens or spend (its request stays used)
	// AttemptUncertain: the connection was lost (or the gate cut the
	// stream) after the first byte. Reconciled from the provider's usage
	// when it arrived, else charged its full reservation; never silently
	// a new semantic attempt.
	AttemptUncertain AttemptState = "uncertain"
)

// attemptOf maps a settlement outcome to the attempt's final state.
func attemptOf(out Outcome, sent bool) AttemptState {
	switch out {
	case OutcomeNotSent:
		return AttemptNotSent
	case OutcomeLost, OutcomeCut:
		if !sent {
			return AttemptNotSent
		}
		return AttemptUncertain
	}
	return AttemptCompleted
}

// Attempt is one transmission attempt of a grant, as [Gate.Attempts]
// returns it. Decision is the egress decision's EvidenceDigest@1 ("" when
// the decider did not share the gate's transaction). Sent is zero when
// no byte was written; Settled is zero while the attempt is open.
type Attempt struct {
	ID       int64        `json:"id"`
	Route    string       `json:"route"` // "METHOD /path" ("" for attempts recorded before the column existed)
	State    AttemptState `json:"state"`
	Decision string       `json:"decision,omitempty"`
	Created  time.Time    `json:"created"`
	Sent     time.Time    `json:"sent,omitzero"`
	Settled  time.Time    `json:"settled,omitzero"`
	Outcome  Outcome      `json:"outcome,omitempty"`
	Reserved Amount       `json:"reserved"`
	Charged  Amount       `json:"charged"`
}

// maxAttempts bounds what [Gate.Attempts] returns.
const maxAttempts = 1000

// Attempts returns the most recent attempts of grant id (at most 1000),
// oldest first. Unmetered routes (token counting, model listing) have
// attempts too, reserving and charging nothing.
func (g *Gate) Attempts(ctx context.Context, id string) ([]Attempt, error) {
	rows, err := g.ledger.db.QueryContext(ctx, `SELECT id, route, attempt, decision, created_at, sent_at, settled_at, outcome,
		tokens, spend, settled_tokens, settled_spend FROM gate_reservations WHERE grant_id = ? ORDER BY id DESC LIMIT ?`, id, maxAttempts)
	if err != nil {
		return nil, fmt.Errorf("read attempts: %w", err)
	}
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		a, err := scanAttempt(rows)
		if err != nil {
			return nil, fmt.Errorf("read attempts: %w", err)
		}
		out = append([]Attempt{a}, out...)
	}
	return out, rows.Err()
}

func scanAttempt(rows *sql.Rows) (Attempt, error) {
	var a Attempt
	var created int64
	var sent, settled, ct, cs sql.NullInt64
	var outcome sql.NullString
	err := rows.Scan(&a.ID, &a.Route, &a.State, &a.Decision, &created, &sent, &settled, &outcome,
		&a.Reserved.Tokens, &a.Reserved.Spend, &ct, &cs)
	a.Created = time.Unix(0, created).UTC()
	if sent.Valid {
		a.Sent = time.Unix(0, sent.Int64).UTC()
	}
	if settled.Valid {
		a.Settled = time.Unix(0, settled.Int64).UTC()
	}
	a.Outcome = Outcome(outcome.String)
	a.Charged = Amount{Tokens: ct.Int64, Spend: NanoUSD(cs.Int64)}
	return a, err
}

// sentMarks collects attempts whose first byte was written, for the
// watcher to record in one write transaction per WatchInterval: the
// "sent" state costs the request path nothing but an append.
type sentMarks struct {
	mu  sync.Mutex
	ids map[int64]int64 // attempt id → Unix ns
}

func (s *sentMarks) add(rid, at int64) {
	if rid == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids = map[int64]int64{}
	}
	s.ids[rid] = at
}

// drop forgets rid's mark: its settlement records the sent time itself,
// so short exchanges never cost the watcher a write.
func (s *sentMarks) drop(rid int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ids, rid)
}

func (s *sentMarks) take() map[int64]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.ids
	s.ids = nil
	return out
}

// flushSent records the pending sent marks. Only attempts still
// decided move: a settlement that came first keeps its final state.
func (g *Gate) flushSent(ctx context.Context) {
	marks := g.sent.take()
	if len(marks) == 0 {
		return
	}
	g.ledger.w.write(ctx, func(tx store.Tx) error {
		for rid, at := range marks {
			if _, err := tx.ExecContext(ctx, `UPDATE gate_reservations SET attempt = ?, sent_at = ?
				WHERE id = ? AND attempt = ? AND settled_at IS NULL`, AttemptSent, at, rid, AttemptDecided); err != nil {
				return err
			}
		}
		return nil
	}) // a failure leaves the rows decided; settlement still records sent_at
}
