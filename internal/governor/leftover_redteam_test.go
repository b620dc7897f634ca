package governor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/store"
)

// TestLeftoverCleanupKeepsLiveSupervisorsCandidate: a job leaves
// "running" while the process that supervises it still works on its
// candidate directory — a job quarantined while it runs (the operator's
// `coagent8 quarantine`, or a containment) is tainted first and its
// candidate read afterwards, its agent possibly still writing the layer.
// Another coagent8 sharing the state directory, opening its first
// delegate job then, removed that directory as a leftover (its job was
// not running). Only a job whose supervisor is gone leaves a leftover.
func TestLeftoverCleanupKeepsLiveSupervisorsCandidate(t *testing.T) {
	ctx := context.Background()
	db, jobs := openJobsDB(t)
	spec := job.Spec{Workspace: t.TempDir(), Base: "HEAD", Backend: "claude", Model: "m"}
	create := func(to job.State, reason string) job.Job {
		j, err := jobs.Create(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		if to != job.Running {
			if err := jobs.Transition(ctx, j.ID, []job.State{job.Running}, to, reason); err != nil {
				t.Fatal(err)
			}
		}
		return j
	}
	dead := create(job.Failed, job.ReasonSupervisorGone)
	superviseByGone(t, db, dead.ID)
	quarantined := create(job.Tainted, job.ReasonQuarantined) // this (live) process supervises it
	failed := create(job.Failed, "delegate.run")
	running := create(job.Running, "")
	cands := t.TempDir()
	tests := []struct {
		name, id string
		kept     bool
	}{
		{"ended, supervisor gone", dead.ID, false},
		{"quarantined while its supervisor lives", quarantined.ID, true},
		{"failed, supervisor still finishing", failed.ID, true},
		{"running", running.ID, true},
	}
	for _, tt := range tests {
		os.MkdirAll(filepath.Join(cands, tt.id, "upper"), 0o700)
		os.WriteFile(filepath.Join(cands, tt.id, "upper", "f"), []byte("x"), 0o600)
	}
	deps := DelegateDeps{Jobs: jobs, WorkDir: t.TempDir(), CandidateDir: cands}
	g := &Governor{delegation: func(context.Context) (DelegateDeps, error) { return deps, nil }}
	if _, err := g.deps(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		_, err := os.Stat(filepath.Join(cands, tt.id, "upper", "f"))
		if got := err == nil; got != tt.kept {
			t.Errorf("%s: kept = %v, want %v", tt.name, got, tt.kept)
		}
	}
}

// openJobsDB is openJobs with its database.
func openJobsDB(t *testing.T) (*store.DB, *job.Store) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	jobs, err := job.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return db, jobs
}

// superviseByGone records job id as supervised by a real process that
// has exited, as a killed coagent8 leaves its jobs.
func superviseByGone(t *testing.T, db *store.DB, id string) {
	t.Helper()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().ExecContext(context.Background(), `UPDATE jobs SET supervisor_pid=? WHERE id=?`, gone.ProcessState.Pid(), id); err != nil {
		t.Fatal(err)
	}
}
