package job

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

const columns = `id, workspace, base, backend, model, budget, state, reason, supervisor_pid, supervisor_start,
	created_at, updated_at, expires_at, patch, patch_digest, findings, message, admitted_by, admitted_digest, admitted_at, checks`

// Get returns job id; an unknown id is INVALID_INPUT job.unknown.
func (s *Store) Get(ctx context.Context, id string) (Job, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM jobs WHERE id=?`, id)
	j, err := scan(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, UnknownError(id)
	}
	if err != nil {
		return Job{}, storeError(err)
	}
	return j, nil
}

// UnknownError is the refusal of a job id that names no job (INVALID_INPUT
// job.unknown). Its message echoes the id as [fault.QuoteInput] shows
// user input; a surface that hides another workspace's job must refuse it
// with this same error, so the two cannot be told apart.
func UnknownError(id string) *fault.Error {
	return fault.Wrap(fault.InvalidInput, ReasonUnknown, "Unknown job handle "+fault.QuoteInput(id)+"; `coagent8 jobs` lists the jobs.", errNoJob).With("job", id)
}

// List returns every job, newest first; workspace "" lists all workspaces.
func (s *Store) List(ctx context.Context, workspace string) ([]Job, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+columns+` FROM jobs WHERE ?='' OR workspace=?
		ORDER BY created_at DESC, id`, workspace, workspace)
	if err != nil {
		return nil, storeError(err)
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		j, err := scan(rows)
		if err != nil {
			return nil, storeError(err)
		}
		out = append(out, j)
	}
	return out, storeErrorOrNil(rows.Err())
}

func storeErrorOrNil(err error) error {
	if err != nil {
		return storeError(err)
	}
	return nil
}

type scanner interface{ Scan(...any) error }

func scan(r scanner) (Job, error) {
	var j Job
	var budget, state, findings string
	var created, updated, expires, admitted int64
	var patch, message []byte
	var digest, checks string
	err := r.Scan(&j.ID, &j.Workspace, &j.Base, &j.Backend, &j.Model, &budget, &state, &j.Reason,
		&j.SupervisorPID, &j.SupervisorStart, &created, &updated, &expires, &patch, &digest, &findings,
		&message, &j.AdmittedBy, &j.AdmittedDigest, &admitted, &checks)
	if err != nil {
		return Job{}, err
	}
	if j.State, err = ParseState(state); err != nil {
		return Job{}, err
	}
	if err := json.Unmarshal([]byte(budget), &j.Budget); err != nil {
		return Job{}, err
	}
	j.Created, j.Updated, j.Expires = time.UnixMilli(created), time.UnixMilli(updated), time.UnixMilli(expires)
	if admitted > 0 {
		j.Admitted = time.UnixMilli(admitted)
	}
	if digest != "" {
		j.Candidate = &Candidate{Patch: patch, Digest: digest, Message: message}
		if err := json.Unmarshal([]byte(findings), &j.Candidate.Findings); err != nil {
			return Job{}, err
		}
		if checks != "" {
			j.Candidate.Verification = new(Verification)
			if err := json.Unmarshal([]byte(checks), j.Candidate.Verification); err != nil {
				return Job{}, err
			}
		}
	}
	return j, nil
}
