package governor

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/crash"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/redact"
)

// revokeLog is a gate that records the grants revoked (nothing else of it
// is called here).
type revokeLog struct {
	DelegateGate
	mu      sync.Mutex
	revoked []string
}

func (g *revokeLog) Revoke(_ context.Context, id string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.revoked = append(g.revoked, id)
	return nil
}

// TestJobPanicFailsTheJob: a panic on a delegate job's goroutine ends that
// job failed with reason internal.panic and its grant revoked, before its
// waiters wake; the log has the panic and its stack; the process goes on
// (the governor answers the next status and runs the next job).
func TestJobPanicFailsTheJob(t *testing.T) {
	ctx := context.Background()
	jobs := openJobs(t)
	ws := t.TempDir()
	gate := &revokeLog{}
	deps := DelegateDeps{Jobs: jobs, Gate: gate, WorkDir: t.TempDir()}
	var logged bytes.Buffer
	guard, err := crash.New(slog.New(slog.NewTextHandler(&logged, nil)), redact.NewDiagnostic(""))
	if err != nil {
		t.Fatal(err)
	}
	g := &Governor{delegateDeps: deps, depsOK: true, guard: guard}
	start := func(body func()) (job.Job, *running) {
		j, err := jobs.Create(ctx, job.Spec{Workspace: ws, Base: "HEAD", Backend: "claude", Model: "m", Budget: job.Budget{MaxUSD: 1, MaxMinutes: 1}})
		if err != nil {
			t.Fatal(err)
		}
		_, cancel := context.WithCancel(ctx)
		r := &running{grant: "grant-" + j.ID, cancel: cancel, done: make(chan struct{})}
		g.live.add(j.ID, r)
		g.supervise(ctx, deps, j, r, body)
		return j, r
	}

	bad, r := start(func() { panic("runner bug") })
	wctx, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	g.WaitJob(wctx, bad.ID)
	select {
	case <-r.done:
	default:
		t.Fatal("the panicked job never ended")
	}
	v, err := g.JobStatus(ctx, ws, bad.ID)
	if err != nil || v.State != job.Failed.String() || v.Reason != crash.Reason {
		t.Errorf("panicked job: %s %q (%v), want failed %q", v.State, v.Reason, err, crash.Reason)
	}
	gate.mu.Lock()
	if got := strings.Join(gate.revoked, ","); got != r.grant {
		t.Errorf("revoked %q, want the job's grant %q", got, r.grant)
	}
	gate.mu.Unlock()
	if log := logged.String(); !strings.Contains(log, "runner bug") || !strings.Contains(log, "delegate_panic_test.go") {
		t.Errorf("log lacks the panic or its stack:\n%s", log)
	}

	ended := make(chan string, 1)
	good, _ := start(func() {
		_ = jobs.Transition(ctx, <-ended, []job.State{job.Running}, job.Failed, "delegate.agent_exited")
	})
	ended <- good.ID
	g.WaitJob(wctx, good.ID)
	if v, err := g.JobStatus(ctx, ws, good.ID); err != nil || v.Reason != "delegate.agent_exited" {
		t.Errorf("next job: %s %q (%v), want its own ending", v.State, v.Reason, err)
	}
}
