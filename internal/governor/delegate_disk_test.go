package governor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// TestEndedJobFreesItsCandidate: a job's candidate directory (its overlay
// upper layer under the per-user candidates directory) is removed however
// the job ends; what can be admitted is the patch stored with the job. A
// failed or cancelled job kept it, so each left its bytes behind for good
// (one the sandbox ended for disk use up to 8 GiB); only a disk-limited
// job's was removed.
func TestEndedJobFreesItsCandidate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		class      sandbox.ExitClass
		runErr     error
		cancelled  bool
		wantState  job.State
		wantReason string
	}{
		{"disk limit", sandbox.ExitDiskLimit, nil, false, job.Failed, "delegate.agent_disk_limit"},
		{"agent signalled", sandbox.ExitSignalled, nil, false, job.Failed, "delegate.agent_signalled"},
		{"run error", sandbox.ExitSignalled, fault.New(fault.ProcessError, "delegation.report", "x"), false, job.Failed, "delegation.report"},
		{"cancelled", sandbox.ExitSignalled, nil, true, job.Cancelled, "delegate.cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			jobs := openJobs(t)
			j, err := jobs.Create(ctx, job.Spec{Workspace: t.TempDir(), Base: "HEAD", Backend: "claude", Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			deps := DelegateDeps{Jobs: jobs, WorkDir: t.TempDir(), CandidateDir: t.TempDir()}
			os.MkdirAll(filepath.Join(deps.WorkDir, j.ID), 0o700)
			upper := filepath.Join(deps.CandidateDir, j.ID, "upper")
			os.MkdirAll(filepath.Join(upper, "sub"), 0o755)
			os.WriteFile(filepath.Join(upper, "sub", "fill"), make([]byte, 4096), 0o644)
			g := &Governor{delegateDeps: deps, depsOK: true}
			res := delegation.Result{Receipt: sandbox.Receipt{Exit: sandbox.Exit{Class: tc.class, Code: -1}}}
			g.finishJob(ctx, deps, j, &running{done: make(chan struct{}), cancelled: tc.cancelled}, res, tc.runErr, nil)
			got, err := jobs.Get(ctx, j.ID)
			if err != nil || got.State != tc.wantState || got.Reason != tc.wantReason {
				t.Fatalf("job %v %q (%v), want %v %q", got.State, got.Reason, err, tc.wantState, tc.wantReason)
			}
			if _, err := os.Stat(filepath.Join(deps.CandidateDir, j.ID)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("candidate directory after the job ended: %v, want it removed", err)
			}
			if _, err := os.Stat(filepath.Join(deps.WorkDir, j.ID, "receipt.json")); err != nil {
				t.Errorf("the job directory lost its receipt: %v", err)
			}
		})
	}
}

// TestLeftoverCandidatesRemoved: the candidate directories a coagent8
// left when it was killed (its jobs since failed job.supervisor_gone by
// the job store) are removed when a coagent8 opens what delegate jobs run
// on; a running job's directory (another process's), a directory no job
// of this store names (another state directory's: the candidates
// directory is per user) and other names are kept.
func TestLeftoverCandidatesRemoved(t *testing.T) {
	ctx := context.Background()
	db, jobs := openJobsDB(t)
	spec := job.Spec{Workspace: t.TempDir(), Base: "HEAD", Backend: "claude", Model: "m"}
	ended, err := jobs.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.Transition(ctx, ended.ID, []job.State{job.Running}, job.Failed, job.ReasonSupervisorGone); err != nil {
		t.Fatal(err)
	}
	superviseByGone(t, db, ended.ID)
	running, err := jobs.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	cands := t.TempDir()
	names := []string{ended.ID, running.ID, "job_000000000000000000000000", "notes"}
	for _, n := range names {
		os.MkdirAll(filepath.Join(cands, n, "upper"), 0o700)
		os.WriteFile(filepath.Join(cands, n, "upper", "f"), []byte("x"), 0o600)
	}
	deps := DelegateDeps{Jobs: jobs, WorkDir: t.TempDir(), CandidateDir: cands}
	g := &Governor{delegation: func(context.Context) (DelegateDeps, error) { return deps, nil }}
	if _, err := g.deps(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		_, err := os.Stat(filepath.Join(cands, n))
		if kept, want := err == nil, n != ended.ID; kept != want {
			t.Errorf("%s: kept = %v, want %v", n, kept, want)
		}
	}
}
