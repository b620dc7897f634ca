//go:build linux && amd64

package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestStaleJobRootsSwept: a run removes the job roots and cgroups of runs
// whose supervisor died (unlocked and old), keeps those of live runs
// (locked), unlocked ones too young to judge, and names that are not job
// ids.
func TestStaleJobRootsSwept(t *testing.T) {
	s := newTestSandbox(t)
	if err := ensureJobsDir(s.cfg.JobsDir); err != nil {
		t.Fatal(err)
	}
	layout, err := detectCgroups(s.cfg.CgroupRoot)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(id string, lock, aged bool) (string, *jobCgroups) {
		root := filepath.Join(s.cfg.JobsDir, id)
		if err := os.MkdirAll(filepath.Join(root, "workspace", "deep"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "workspace", "deep", "copy"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := lockJobRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		if aged {
			old := time.Now().Add(-2 * staleMinAge)
			if err := os.Chtimes(root, old, old); err != nil {
				t.Fatal(err)
			}
		}
		if !lock {
			f.Close() // the supervisor died: the kernel dropped its lock
		}
		keep := lock || !aged
		if keep {
			t.Cleanup(func() { f.Close(); os.RemoveAll(root) })
		}
		cg, err := layout.create(id, Limits{Memory: 64 << 20, Pids: 8, CPU: 100})
		if err != nil {
			t.Fatal(err)
		}
		if keep {
			t.Cleanup(cg.remove)
		}
		return root, cg
	}
	deadRoot, deadCg := mk(newJobID(), false, true)
	liveRoot, liveCg := mk(newJobID(), true, true)
	// Unlocked but new: could be a run between creating and locking it.
	youngRoot, youngCg := mk(newJobID(), false, false)
	other := filepath.Join(s.cfg.JobsDir, "not-a-job")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })

	r := runUnqualified(t, s, context.Background(), Spec{Path: "/usr/bin/true"})
	if !r.Exit.Success() {
		t.Fatalf("exit %+v", r.Exit)
	}
	for _, gone := range append([]string{deadRoot, deadCg.leaf}, values(deadCg.v1)...) {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Errorf("stale %s was not swept (%v)", gone, err)
		}
	}
	for _, kept := range append(append([]string{liveRoot, liveCg.leaf, youngRoot, youngCg.leaf, other}, values(liveCg.v1)...), values(youngCg.v1)...) {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s of a live run (or not a job) was removed: %v", kept, err)
		}
	}
}

func values(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestCancelledBeforeStartRunsNothing: a context already cancelled when the
// run reaches the fork starts nothing and reports the run cancelled.
func TestCancelledBeforeStartRunsNothing(t *testing.T) {
	s := newTestSandbox(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	j, err := s.admit(Spec{Path: "/usr/bin/echo", Args: []string{"started"}, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.runJob(ctx, j, "")
	if err != nil || r.Exit.Class != ExitCancelled || !r.TreeEmpty {
		t.Fatalf("err %v exit %+v tree_empty %v; want cancelled, empty", err, r.Exit, r.TreeEmpty)
	}
	if out.Len() != 0 {
		t.Errorf("the command ran (%q) although the run was cancelled before it started", out.String())
	}
}

// TestInterruptedQualificationRecordsNothing: probes cut short by
// cancellation neither pass nor fail the host: no record is stored and the
// error says the qualification was interrupted.
func TestInterruptedQualificationRecordsNothing(t *testing.T) {
	s := newTestSandbox(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Qualify(ctx)
	if fe := fault.From(err); fe == nil || fe.Code != fault.Aborted {
		t.Fatalf("Qualify(cancelled) = %v; want ABORTED", err)
	}
	if m, _ := filepath.Glob(filepath.Join(s.cfg.StateDir, "sandbox", "qualification-*.json")); len(m) != 0 {
		t.Errorf("an interrupted qualification stored %v", m)
	}
}

// TestStatusReportsReadinessWithoutRunning: doctor's view — available and
// unqualified at first, qualified after Qualify, and the missing
// capability named on a host that cannot run (simulated by a Landlock
// floor above the host's).
func TestStatusReportsReadinessWithoutRunning(t *testing.T) {
	s := newTestSandbox(t)
	if st := s.Status(); !st.Available || st.Qualified || st.Missing != "" || st.Advice != QualifyAdvice {
		t.Fatalf("fresh: %+v; want available, not qualified, advice to qualify", st)
	}
	if _, err := s.Qualify(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); !st.Available || !st.Qualified || st.QualifiedAt == nil || st.Advice != "" {
		t.Errorf("after Qualify: %+v; want qualified with a time, no advice", st)
	}
	h, err := readHost()
	if err != nil {
		t.Fatal(err)
	}
	high, err := New(Config{StateDir: s.cfg.StateDir, MinLandlockABI: h.abi + 1})
	if err != nil {
		t.Fatal(err)
	}
	if st := high.Status(); st.Available || !strings.Contains(st.Missing, "Landlock ABI") {
		t.Errorf("Landlock floor above host: %+v; want unavailable naming Landlock", st)
	}
}
