package operator

import (
	"context"
	"database/sql"
	"sort"
	"strings"
	"sync"
	"time"
)

// DecisionRow is one egress decision (internal/egress/ledger's exportable
// record: purpose, effect, reason, bytes, evidence digest; never payload
// or target).
type DecisionRow struct {
	ID                      int64
	Time                    time.Time
	Purpose, Effect, Reason string
	Bytes                   int64
	Evidence                string
	// Suppressed is how many refusals of the job were left out of the
	// record before this one (egress refusal limit), or, on an
	// egress.refusals_suppressed row, left out at its end.
	Suppressed int64
}

// AccountRow is one disclosure account: a purpose's ceiling and use.
type AccountRow struct {
	Purpose             string
	MaxUses, MaxBytes   int64
	UsedUses, UsedBytes int64
}

// ReasonCount is how often a refusal reason occurred.
type ReasonCount struct {
	Reason string
	Count  int
}

// decisionTally keeps counts by effect and refusal reason, and the newest
// refusals, updated incrementally from the last record id read: a page
// costs the rows added since the previous one, not a scan of every
// decision (issue 17 performance: 100,000 decisions). Safe for concurrent
// use.
type decisionTally struct {
	mu       sync.Mutex
	lastID   int64
	effects  map[string]int
	reasons  map[string]int
	refusals []DecisionRow // newest last, at most 2*keepRefusals
	strs     interner      // purposes, effects and reasons
}

const keepRefusals = 200

// decisionCols are the columns scanDecision reads: suppressed reads 0 on
// a database from before the egress refusal limit (has: [tables]).
func decisionCols(has map[string]bool) string {
	if has[suppressedCol] {
		return `id, at, purpose, effect, reason, bytes, evidence, suppressed`
	}
	return `id, at, purpose, effect, reason, bytes, evidence, 0`
}

func scanDecision(rows *sql.Rows) (DecisionRow, error) {
	var d DecisionRow
	var at string
	err := rows.Scan(&d.ID, &at, &d.Purpose, &d.Effect, &d.Reason, &d.Bytes, &d.Evidence, &d.Suppressed)
	d.Time, _ = time.Parse(time.RFC3339Nano, at)
	return d, err
}

// update reads the records added since the last call.
func (t *decisionTally) update(ctx context.Context, db *sql.DB, has map[string]bool) error {
	if !has["egress_record"] {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	rows, err := db.QueryContext(ctx, `SELECT `+decisionCols(has)+` FROM egress_record WHERE id > ? ORDER BY id`, t.lastID)
	if err != nil {
		return stateErr(err)
	}
	defer rows.Close()
	if t.effects == nil {
		t.effects, t.reasons = map[string]int{}, map[string]int{}
	}
	kept := len(t.refusals)
	for rows.Next() {
		d, err := scanDecision(rows)
		if err != nil {
			return stateErr(err)
		}
		t.add(d)
	}
	if len(t.refusals) != kept {
		t.compact()
	}
	return stateErr(rows.Err())
}

// compact gives the kept refusals one shared copy of their repeated
// strings and one allocation for their evidence. The driver allocates
// every column of every row among the transient strings of all the
// rows read (100,000 on a first view), and a handful of survivors then
// keeps many mostly free heap spans in use (issue 17: idle RSS).
func (t *decisionTally) compact() {
	var b strings.Builder
	for i := range t.refusals {
		b.WriteString(t.refusals[i].Evidence)
	}
	all := b.String()
	for i := range t.refusals {
		d := &t.refusals[i]
		d.Purpose, d.Effect, d.Reason = t.strs.get(d.Purpose), t.strs.get(d.Effect), t.strs.get(d.Reason)
		n := len(d.Evidence)
		d.Evidence, all = all[:n], all[n:]
	}
}

// add counts d. Refusals the egress refusal limit left out of the record
// count too, under their effect ("deny") and the reason
// egress.refusals_suppressed (their own reasons were not kept): d's
// carried count, or a summary row's count in place of the row itself.
func (t *decisionTally) add(d DecisionRow) {
	t.lastID = d.ID
	n := 1
	if d.Reason == reasonRefusalsSuppressed {
		n = int(d.Suppressed)
	} else if d.Suppressed > 0 {
		t.count("deny", reasonRefusalsSuppressed, int(d.Suppressed))
	}
	d.Effect, d.Reason = t.count(d.Effect, d.Reason, n)
	if d.Effect == "allow" {
		return
	}
	t.refusals = append(t.refusals, d)
	if len(t.refusals) > 2*keepRefusals {
		t.refusals = append([]DecisionRow(nil), t.refusals[len(t.refusals)-keepRefusals:]...)
	}
}

// count adds n decisions of effect (and, unless allowed, reason) and
// returns both as interned strings.
func (t *decisionTally) count(effect, reason string, n int) (string, string) {
	if _, ok := t.effects[effect]; !ok {
		effect = t.strs.get(effect) // a map key kept for good
	}
	t.effects[effect] += n
	if effect == "allow" {
		return effect, reason
	}
	if _, ok := t.reasons[reason]; !ok {
		reason = t.strs.get(reason)
	}
	t.reasons[reason] += n
	return effect, reason
}

// reasonRefusalsSuppressed is egress.ReasonRefusalsSuppressed (the
// dashboard reads the tables, it does not import their owners).
const reasonRefusalsSuppressed = "egress.refusals_suppressed"

// summary returns the counts by effect, the refusal reasons most frequent
// first, and the newest refusals first.
func (t *decisionTally) summary() (effects map[string]int, reasons []ReasonCount, refusals []DecisionRow) {
	t.mu.Lock()
	defer t.mu.Unlock()
	effects = map[string]int{}
	for k, v := range t.effects {
		effects[k] = v
	}
	for k, v := range t.reasons {
		reasons = append(reasons, ReasonCount{k, v})
	}
	sort.Slice(reasons, func(i, j int) bool {
		if reasons[i].Count != reasons[j].Count {
			return reasons[i].Count > reasons[j].Count
		}
		return reasons[i].Reason < reasons[j].Reason
	})
	for i := len(t.refusals) - 1; i >= 0 && len(refusals) < keepRefusals; i-- {
		refusals = append(refusals, t.refusals[i])
	}
	return effects, reasons, refusals
}

// recentDecisions returns the newest limit decisions, newest first.
func recentDecisions(ctx context.Context, db *sql.DB, has map[string]bool, limit int) ([]DecisionRow, error) {
	if !has["egress_record"] {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT `+decisionCols(has)+` FROM egress_record ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, stateErr(err)
	}
	defer rows.Close()
	var out []DecisionRow
	for rows.Next() {
		d, err := scanDecision(rows)
		if err != nil {
			return nil, stateErr(err)
		}
		out = append(out, d)
	}
	return out, stateErr(rows.Err())
}

// accounts returns every disclosure account.
func accounts(ctx context.Context, db *sql.DB, has map[string]bool) ([]AccountRow, error) {
	if !has["egress_account"] {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT purpose, max_uses, max_bytes, used_uses, used_bytes
		FROM egress_account ORDER BY purpose`)
	if err != nil {
		return nil, stateErr(err)
	}
	defer rows.Close()
	var out []AccountRow
	for rows.Next() {
		var a AccountRow
		if err := rows.Scan(&a.Purpose, &a.MaxUses, &a.MaxBytes, &a.UsedUses, &a.UsedBytes); err != nil {
			return nil, stateErr(err)
		}
		out = append(out, a)
	}
	return out, stateErr(rows.Err())
}
