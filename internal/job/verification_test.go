package job

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/store"
	"github.com/coagent8/coagent8/internal/verify"
)

// TestVerificationRoundTrip: a candidate's checks (exit statuses, tails,
// receipts, or the note that none ran) read back as attached, after a
// restart too.
func TestVerificationRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, db := openAt(t, path)
	v := &Verification{Checks: []verify.Check{
		{Command: []string{"/usr/bin/sh", "-c", "grep -q new file.txt"}, Kind: verify.KindOther, Status: verify.Passed, Exit: "exited",
			Receipt: &verify.Receipt{JobID: "sbx1", Profile: "verify"}},
		{Command: []string{"/usr/bin/sh", "-c", "exit 3"}, Kind: verify.KindOther, Status: verify.Failed, Exit: "exited", ExitCode: 3,
			StderrTail: "boom"},
	}}
	none := &Verification{Note: "no checks configured"}
	ids := map[string]*Verification{}
	for _, want := range []*Verification{v, none, nil} {
		j, _ := s.Create(ctx, spec)
		if _, err := s.Attach(ctx, j.ID, Candidate{Patch: []byte("p"), Digest: quarantine.Digest([]byte("p")), Verification: want}); err != nil {
			t.Fatal(err)
		}
		ids[j.ID] = want
	}
	db.Close()
	s2, db2 := openAt(t, path)
	defer db2.Close()
	for id, want := range ids {
		j, err := s2.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, j.Candidate.Verification); d != "" {
			t.Errorf("%s verification (-want +got):\n%s", id, d)
		}
	}
}

// TestMigrationKeepsOldJobs: a state database written before the checks
// column (schema version 2) opens, keeps its job and candidate, and
// reports no verification for it.
func TestMigrationKeepsOldJobs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := store.Open(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "jobs", migrations[:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().ExecContext(ctx, `INSERT INTO jobs(id, workspace, base, backend, model, budget, state,
		supervisor_pid, supervisor_start, created_at, updated_at, expires_at, patch, patch_digest, message)
		VALUES('job_old','/ws','abc','claude','m','{}','succeeded',1,1,1,1,9999999999999,x'70','sha256:x','done')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, db2 := openAt(t, path)
	defer db2.Close()
	j, err := s.Get(ctx, "job_old")
	if err != nil {
		t.Fatal(err)
	}
	if j.State != Succeeded || j.Candidate == nil || string(j.Candidate.Message) != "done" || j.Candidate.Verification != nil {
		t.Errorf("old job after migration: state %v candidate %+v, want succeeded with its message and no verification", j.State, j.Candidate)
	}
}
