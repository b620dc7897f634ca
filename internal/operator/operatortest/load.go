// Package operatortest writes the operator dashboard's benchmark load into
// a state directory through the packages that own each table (gate
// grants, the egress ledger, sessions, the security event log), as the
// MCP server and the gate would in other processes. The page-latency
// benchmark (internal/operator) and the idle-RSS benchmark (bench/operator)
// measure the same state (issue 17 performance). It is test support: no
// coagent8 command imports it.
package operatortest

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/secret"
	"github.com/coagent8/coagent8/internal/session"
	"github.com/coagent8/coagent8/internal/store"
	"github.com/coagent8/coagent8/internal/turn"
)

// Load is the size of the state Write produces.
type Load struct {
	// Jobs is the number of jobs: each a task-sandbox run (an admission
	// and a receipt event) with a gate grant under the same job id.
	Jobs int
	// Decisions is the number of egress records, one in 33 a refusal
	// over five reasons.
	Decisions int
	// Workspaces is the number of workspaces with one completed session.
	Workspaces int
}

// Issue17 is the issue's performance load: 1,000 jobs and 100,000
// decisions (and three workspaces' sessions).
var Issue17 = Load{Jobs: 1000, Decisions: 100000, Workspaces: 3}

// Write creates (or adds to) state.db, gate.key and events.jsonl in the
// absolute directory dir with load l. Errors name the step that failed.
func Write(ctx context.Context, dir string, l Load) error {
	db, err := store.Open(ctx, filepath.Join(dir, "state.db"), 0)
	if err != nil {
		return err
	}
	defer db.Close()
	events, err := event.OpenFile(filepath.Join(dir, "events.jsonl"), redact.NewDiagnostic(""))
	if err != nil {
		return err
	}
	defer events.Close()
	if err := jobs(ctx, db, dir, events, l.Jobs); err != nil {
		return err
	}
	if err := decisions(ctx, db, l.Decisions); err != nil {
		return err
	}
	return sessions(ctx, db, dir, l.Workspaces)
}

// jobs grants n gate grants and records each job's sandbox events; the
// second job has used part of its budget.
func jobs(ctx context.Context, db *store.DB, dir string, events *event.FileSink, n int) error {
	key, err := gate.LoadKey(filepath.Join(dir, "gate.key"))
	if err != nil {
		return err
	}
	g, err := gate.New(ctx, gate.Options{DB: db, Key: key, Egress: sealNothing{}})
	if err != nil {
		return err
	}
	defer g.Close()
	ref, err := secret.ParseRef("env:OPERATOR_TEST_KEY")
	if err != nil {
		return err
	}
	for i := range n {
		id := fmt.Sprintf("job-%04d", i)
		_, _, err := g.Grant(ctx, gate.Spec{Provider: gate.Anthropic, Model: "claude-sonnet-5", Job: id, TTL: time.Hour,
			Secret: ref, MaxRequests: 10, MaxTokens: 100000, MaxSpend: gate.USD(2), Price: &gate.Price{InputPerMTok: 3, OutputPerMTok: 15},
			OutputCeiling: 4096})
		if err != nil {
			return fmt.Errorf("grant %s: %w", id, err)
		}
		for _, e := range []event.Event{
			{Type: event.TypeDecision, Reason: "sandbox.admitted", Rule: "sandbox", IDs: map[string]string{"job_id": id}},
			{Type: event.TypeExecution, Reason: "sandbox.run.exited", Rule: "sandbox",
				IDs: map[string]string{"job_id": id, "exit_code": "0"}, Detail: "tree_empty=true run_ms=120.0 memory_peak_bytes=4194304"},
		} {
			if err := events.Record(e); err != nil {
				return fmt.Errorf("record event: %w", err)
			}
		}
	}
	_, err = db.SQL().ExecContext(ctx, `UPDATE gate_grants SET requests = requests + 4, tokens = tokens + 30000, spend = spend + 200000000 WHERE job = 'job-0001'`)
	if err != nil {
		return fmt.Errorf("use grant: %w", err)
	}
	return nil
}

// sealNothing is an egress decider Write never reaches (no request is
// forwarded); gate.New requires one.
type sealNothing struct{}

func (sealNothing) Seal(context.Context, egress.Transmission) ([]byte, error) {
	return nil, fmt.Errorf("operatortest: no request is forwarded")
}

// decisions bulk-inserts n egress records in one transaction (the
// ledger appends one at a time, which at 100,000 records would dominate
// the benchmark's setup); the ledger's migration creates the table.
func decisions(ctx context.Context, db *store.DB, n int) error {
	if _, err := ledger.Open(ctx, db, nil); err != nil {
		return err
	}
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO egress_record(at, purpose, effect, reason, bytes, evidence) VALUES(?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	reasons := []string{"egress.credential", "egress.category", "egress.threshold", "egress.target", "egress.config_conflict"}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		effect, reason := "allow", "egress.allowed"
		if i%33 == 0 {
			effect, reason = "deny", reasons[i%len(reasons)]
		}
		at := t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)
		if _, err := st.ExecContext(ctx, at, "provider-request", effect, reason, 1000+i%5000, "ed1:"+strconv.Itoa(i)); err != nil {
			return fmt.Errorf("insert egress record: %w", err)
		}
	}
	return tx.Commit()
}

// sessions begins and completes one session in each of n workspaces
// (/work/project-0, ...).
func sessions(ctx context.Context, db *store.DB, dir string, n int) error {
	s, err := session.Open(ctx, session.Options{DB: db, LockDir: filepath.Join(dir, "locks")})
	if err != nil {
		return err
	}
	defer s.Close()
	for i := range n {
		l, err := s.Begin(ctx, turn.Begin{Workspace: fmt.Sprintf("/work/project-%d", i), Backend: "claude", Model: "claude-sonnet-5", Prompt: "hi"})
		if err != nil {
			return err
		}
		if w := l.End(ctx, turn.End{Status: turn.Completed, Model: "claude-sonnet-5", Output: "ok"}); w != "" {
			return fmt.Errorf("end session: %s", w)
		}
	}
	return nil
}
