package governor

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
)

// TestStatusWaitsForTheRunner: a job whose row ended while this process
// still stores its result (a quarantine during the run taints it before
// its candidate is attached) is reported once the runner finished, so a
// caller polling until the state is not running reads the candidate with
// it (the CI flake of TestDelegateContainmentQuarantines).
func TestStatusWaitsForTheRunner(t *testing.T) {
	ctx := context.Background()
	jobs := openJobs(t)
	ws := t.TempDir()
	j, err := jobs.Create(ctx, job.Spec{Workspace: ws, Base: "HEAD", Backend: "claude", Model: "m", Budget: job.Budget{MaxUSD: 1, MaxMinutes: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.Transition(ctx, j.ID, []job.State{job.Running}, job.Tainted, "quarantine.compromise"); err != nil {
		t.Fatal(err)
	}
	g := &Governor{delegateDeps: DelegateDeps{Jobs: jobs, WorkDir: t.TempDir()}, depsOK: true}
	r := &running{done: make(chan struct{})}
	g.live.add(j.ID, r)
	go func() {
		time.Sleep(200 * time.Millisecond)
		_, _ = jobs.Attach(ctx, j.ID, job.Candidate{Patch: []byte("diff"), Digest: "sha256:d", Taint: "gate.revoked"})
		close(r.done)
	}()
	v, err := g.JobStatus(ctx, ws, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{v.State, v.Digest}
	if d := cmp.Diff([]string{"tainted", "sha256:d"}, got); d != "" {
		t.Errorf("status (-want +got):\n%s", d)
	}
}

// TestOtherWorkspaceJobLooksUnknown: asking for another workspace's job
// is answered exactly as an id no job has (same code, reason and
// message), so a caller cannot learn which ids exist elsewhere.
func TestOtherWorkspaceJobLooksUnknown(t *testing.T) {
	ctx := context.Background()
	jobs := openJobs(t)
	j, err := jobs.Create(ctx, job.Spec{Workspace: t.TempDir(), Base: "HEAD", Backend: "claude", Model: "m", Budget: job.Budget{MaxUSD: 1, MaxMinutes: 1}})
	if err != nil {
		t.Fatal(err)
	}
	g := &Governor{delegateDeps: DelegateDeps{Jobs: jobs, WorkDir: t.TempDir()}, depsOK: true}
	_, other := g.JobStatus(ctx, t.TempDir(), j.ID)
	got := fault.From(other)
	want := fault.From(job.UnknownError(j.ID))
	if got == nil || got.Code != want.Code || got.Reason != want.Reason || got.Message != want.Message {
		t.Errorf("another workspace's job: %v, want exactly %v", got, want)
	}
}

// openJobs is a job store on a fresh SQLite file.
func openJobs(t *testing.T) *job.Store {
	t.Helper()
	_, jobs := openJobsDB(t)
	return jobs
}
