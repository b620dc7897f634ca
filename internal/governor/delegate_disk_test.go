package governor

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// TestDiskLimitedJobFreesItsCandidate: a job the sandbox ended disk_limit
// wrote its bound's worth of candidate (8 GiB by default) to the host's
// disk; a failed job keeps its candidate directory, so each such job left
// its bytes behind and a few filled the disk the bound protects. That
// candidate directory is removed; another failed job's is kept as before.
func TestDiskLimitedJobFreesItsCandidate(t *testing.T) {
	for _, tc := range []struct {
		class      sandbox.ExitClass
		wantReason string
		wantKept   bool
	}{
		{sandbox.ExitDiskLimit, "delegate.agent_disk_limit", false},
		{sandbox.ExitSignalled, "delegate.agent_signalled", true},
	} {
		t.Run(tc.class.String(), func(t *testing.T) {
			ctx := context.Background()
			jobs := openJobs(t)
			j, err := jobs.Create(ctx, job.Spec{Workspace: t.TempDir(), Base: "HEAD", Backend: "claude", Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			deps := DelegateDeps{Jobs: jobs, WorkDir: t.TempDir(), CandidateDir: t.TempDir()}
			os.MkdirAll(filepath.Join(deps.WorkDir, j.ID), 0o700)
			upper := filepath.Join(deps.CandidateDir, j.ID, "upper")
			os.MkdirAll(upper, 0o755)
			os.WriteFile(filepath.Join(upper, "fill"), make([]byte, 4096), 0o644)
			g := &Governor{delegateDeps: deps, depsOK: true}
			res := delegation.Result{Receipt: sandbox.Receipt{Exit: sandbox.Exit{Class: tc.class, Code: -1}}}
			g.finishJob(ctx, deps, j, &running{done: make(chan struct{})}, res, nil, nil)
			got, err := jobs.Get(ctx, j.ID)
			if err != nil || got.State != job.Failed || got.Reason != tc.wantReason {
				t.Fatalf("job %v %q (%v), want failed %q", got.State, got.Reason, err, tc.wantReason)
			}
			_, err = os.Stat(filepath.Join(deps.CandidateDir, j.ID))
			if kept := err == nil; kept != tc.wantKept {
				t.Errorf("candidate directory kept = %v, want %v", kept, tc.wantKept)
			}
		})
	}
}
