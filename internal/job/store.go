package job

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/store"
)

// Reasons of the typed errors of this package.
const (
	ReasonUnknown        = "job.unknown"
	ReasonState          = "job.state"
	ReasonStore          = "job.store"
	ReasonSupervisorGone = "job.supervisor_gone"
	ReasonExpired        = "job.expired"
	// ReasonTreeSurvived fails a job whose supervisor died and some of
	// whose sandbox processes could not be ended within 5 s.
	ReasonTreeSurvived = "job.tree_survived"
)

// Store is the job table. It is safe for concurrent use; it does not own
// the database.
type Store struct {
	db  *sql.DB
	now func() time.Time
	pid int
}

// Open migrates component "jobs", marks running jobs whose supervisor is
// gone as failed (job.supervisor_gone) and candidates past their expiry as
// expired.
func Open(ctx context.Context, db *store.DB) (*Store, error) {
	if err := db.Migrate(ctx, "jobs", migrations); err != nil {
		return nil, fmt.Errorf("job store %s: %w", db.Path(), err)
	}
	s := &Store{db: db.SQL(), now: time.Now, pid: os.Getpid()}
	if err := s.recover(ctx); err != nil {
		return nil, fmt.Errorf("job store %s: %w", db.Path(), err)
	}
	return s, nil
}

// Create records a new running job supervised by this process and returns
// it.
func (s *Store) Create(ctx context.Context, sp Spec) (Job, error) {
	start, err := startTime(s.pid)
	if err != nil {
		return Job{}, fault.Wrap(fault.Unsupported, ReasonStore, "Delegate jobs need Linux (the supervisor's identity cannot be recorded).", err)
	}
	if sp.TTL <= 0 {
		sp.TTL = DefaultTTL
	}
	budget, _ := json.Marshal(sp.Budget)
	now := s.now()
	j := Job{ID: newID(), Spec: sp, State: Running, SupervisorPID: s.pid, SupervisorStart: start,
		Created: now, Updated: now, Expires: now.Add(sp.TTL)}
	_, err = s.db.ExecContext(ctx, `INSERT INTO jobs(id, workspace, base, backend, model, budget, state,
		supervisor_pid, supervisor_start, created_at, updated_at, expires_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)`,
		j.ID, sp.Workspace, sp.Base, sp.Backend, sp.Model, string(budget), Running.String(), s.pid, start,
		now.UnixMilli(), now.UnixMilli(), j.Expires.UnixMilli())
	if err != nil {
		return Job{}, storeError(err)
	}
	return j, nil
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "job_" + hex.EncodeToString(b[:])
}

func storeError(err error) error {
	return fault.Wrap(fault.HistoryError, ReasonStore, "The job store could not be read or written.", err).WithRetry()
}

// Attach stores a running job's candidate and ends the job succeeded, or
// tainted when c.Taint is set (reason c.Taint) or a finding blocks
// ([quarantine.Tainted], reason quarantine.findings), in one write. A job
// quarantined while it ran ([Store.Quarantine]: tainted, reason
// [ReasonQuarantined], no candidate yet) gets its candidate stored and
// stays tainted with its reason and evidence. Any other job that is not
// running is INVALID_INPUT job.state (see [StateError]).
func (s *Store) Attach(ctx context.Context, id string, c Candidate) (State, error) {
	to, reason := Succeeded, ""
	switch {
	case c.Taint != "":
		to, reason = Tainted, c.Taint
	case quarantine.Tainted(c.Findings):
		to, reason = Tainted, "quarantine.findings"
	}
	f, _ := json.Marshal(c.Findings)
	res, err := s.db.ExecContext(ctx, `UPDATE jobs SET
		state=CASE WHEN state='running' THEN ? ELSE state END, reason=CASE WHEN state='running' THEN ? ELSE reason END,
		patch=?, patch_digest=?, findings=?, message=?, checks=?, updated_at=?
		WHERE id=? AND (state='running' OR state='tainted' AND reason=? AND patch_digest='')`,
		to.String(), reason, c.Patch, c.Digest, string(f), c.Message, verificationJSON(c.Verification), s.now().UnixMilli(),
		id, ReasonQuarantined)
	if err := s.changed(ctx, id, res, err); err != nil {
		return 0, err
	}
	j, err := s.Get(ctx, id)
	if err != nil {
		return 0, err
	}
	return j.State, nil
}

// verificationJSON is the stored form of v (empty for nil).
func verificationJSON(v *Verification) string {
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v) // plain strings and numbers: cannot fail
	return string(b)
}

// Transition moves job id from one of from to to with reason. A job in
// another state is INVALID_INPUT job.state naming the state it is in; an
// unknown id is INVALID_INPUT job.unknown.
func (s *Store) Transition(ctx context.Context, id string, from []State, to State, reason string) error {
	q := `UPDATE jobs SET state=?, reason=?, updated_at=? WHERE id=? AND state IN (` + placeholders(len(from)) + `)`
	args := []any{to.String(), reason, s.now().UnixMilli(), id}
	for _, f := range from {
		args = append(args, f.String())
	}
	res, err := s.db.ExecContext(ctx, q, args...)
	return s.changed(ctx, id, res, err)
}

// MarkAdmitted records that actor admitted the candidate of job id whose
// admitted bytes have digest; the job must be succeeded or tainted.
func (s *Store) MarkAdmitted(ctx context.Context, id, actor, digest string) error {
	now := s.now().UnixMilli()
	res, err := s.db.ExecContext(ctx, `UPDATE jobs SET state='admitted', reason='', admitted_by=?, admitted_digest=?,
		admitted_at=?, updated_at=? WHERE id=? AND state IN ('succeeded','tainted')`, actor, digest, now, now, id)
	return s.changed(ctx, id, res, err)
}

// Reject discards the candidate of job id (succeeded or tainted): the
// patch and message bytes are deleted, the digest and findings kept as the
// record of what was rejected.
func (s *Store) Reject(ctx context.Context, id, actor string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE jobs SET state='rejected', reason=?, patch=NULL, message=NULL,
		updated_at=? WHERE id=? AND state IN ('succeeded','tainted')`, "rejected_by:"+actor, s.now().UnixMilli(), id)
	return s.changed(ctx, id, res, err)
}

// Expire marks job id expired if its candidate is past its time and still
// admissible, discarding the bytes; it reports whether it did.
func (s *Store) Expire(ctx context.Context, id string) (bool, error) {
	now := s.now().UnixMilli()
	res, err := s.db.ExecContext(ctx, `UPDATE jobs SET state='expired', reason=?, patch=NULL, message=NULL, updated_at=?
		WHERE id=? AND state IN ('succeeded','tainted') AND expires_at <= ?`, ReasonExpired, now, id, now)
	if err != nil {
		return false, storeError(err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// changed turns an UPDATE that matched no row into the precise refusal.
func (s *Store) changed(ctx context.Context, id string, res sql.Result, err error) error {
	if err != nil {
		return storeError(err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	j, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	return StateError(j)
}

// StateError is the refusal of an action on a job in the wrong state:
// INVALID_INPUT job.state with details "state" and "reason".
func StateError(j Job) *fault.Error {
	return fault.New(fault.InvalidInput, ReasonState, fmt.Sprintf("Job %s is %s.", j.ID, j.State)).
		With("state", j.State.String()).With("reason", j.Reason)
}

func placeholders(n int) string {
	if n == 0 {
		return "NULL"
	}
	b := make([]byte, 0, 2*n)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '?')
	}
	return string(b)
}

var errNoJob = errors.New("no such job")
