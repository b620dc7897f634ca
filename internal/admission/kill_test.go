//go:build unix

package admission

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/store"
)

// Re-exec hook: the child admits a job and SIGKILLs itself at a step.
const childEnv = "COAGENT8_ADMISSION_TEST_CHILD" // "state|job|workspace|step"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		os.Exit(killChild(v))
	}
	os.Exit(m.Run())
}

func killChild(v string) int {
	var state, id, ws string
	var at int
	if _, err := fmt.Sscanf(v, "%s %s %s %d", &state, &id, &ws, &at); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(state, "state.db"), 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	jobs, err := job.Open(ctx, db)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	kill := func(step int) {
		switch {
		case at < 0 && step == -at:
			// Pause: tell the parent, wait for its go-ahead.
			os.WriteFile(filepath.Join(state, "paused"), nil, 0o600)
			for {
				if _, err := os.Stat(filepath.Join(state, "go")); err == nil {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		case step == at:
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	a, err := New(ctx, Options{Jobs: jobs, Env: config.FromOS(), StateDir: state, testOnlyStep: kill})
	if err == nil {
		_, err = a.Admit(ctx, Request{Job: id, Workspace: ws, Actor: "child"})
	}
	if at < 0 && err == nil {
		return 0
	}
	fmt.Fprintln(os.Stderr, "not killed:", err)
	return 3
}

// TestKillDuringAdmission kills the admitting process at every step: before
// the commit point the checkout is untouched and stays so after restart;
// after it, the restart finishes the admission. Never a partial write once
// coagent8 has reopened its state.
func TestKillDuringAdmission(t *testing.T) {
	edits := []edit{{path: "a.go", content: "package a\n"}, {path: "new/dir/n.txt", content: "n\n"}, {path: "old.txt", del: true}}
	// An attributes file sends the admission down the general path
	// (scratch index, checkout-index); without one it takes the fast path.
	general := map[string]string{".gitattributes": "*.go diff=golang\n"}
	for k, v := range baseFiles {
		general[k] = v
	}
	for i := 0; i < 2*len(edits)+2*stepOp-2; i++ {
		step, base, name := stepPlanned+i/2, baseFiles, "fast"
		if i%2 == 1 {
			base, name = general, "general"
		}
		t.Run(name+"/"+strconv.Itoa(step), func(t *testing.T) {
			f := newFixture(t, base)
			want := f.candidate(edits...).Tree
			id := f.job(edits...)
			pre := worktreeTree(t, f.ws)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %s %d", childEnv, f.state, id, f.ws, step))
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed: %v\n%s", err, out)
			}
			if step < stepCommitted {
				if got := worktreeTree(t, f.ws); got != pre {
					t.Errorf("killed before the commit point, the checkout changed: %s, want %s", got, pre)
				}
			}
			f.open() // restart: recovery
			if err := store.CheckFile(filepath.Join(f.state, "state.db")); err != nil {
				t.Errorf("state database after kill -9: %v", err)
			}
			j, _ := f.jobs.Get(context.Background(), id)
			got := worktreeTree(t, f.ws)
			switch {
			case step < stepCommitted && (got != pre || j.State != job.Succeeded):
				t.Errorf("after restart: tree %s (want the untouched %s), job %v", got, pre, j.State)
			case step >= stepCommitted && (got != want || j.State != job.Admitted || j.AdmittedBy != "child"):
				t.Errorf("after restart: tree %s (want the candidate's %s), job %v by %q", got, want, j.State, j.AdmittedBy)
			}
			assertClean(t, f)
		})
	}
}

// TestRecoveryLeavesLiveAdmissionAlone: a coagent8 that starts while
// another process is between staging and commit does not discard that
// admission's staging (its pending lock is held), and the admission then
// completes.
func TestRecoveryLeavesLiveAdmissionAlone(t *testing.T) {
	edits := []edit{{path: "a.go", content: "package a\n"}, {path: "n.txt", content: "n\n"}}
	f := newFixture(t, baseFiles)
	want := f.candidate(edits...).Tree
	id := f.job(edits...)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %s %d", childEnv, f.state, id, f.ws, -stepStaged))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(f.state, "paused")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("child never reached the staged step")
		}
	}
	f.open() // another coagent8 starts: recovery runs
	staged, _ := filepath.Glob(filepath.Join(f.ws, ".git", "coagent8-admit-*"))
	if len(staged) != 1 {
		t.Errorf("recovery removed a live admission's staging: %v", staged)
	}
	if err := f.adm.Reject(context.Background(), id, f.ws, "test"); fault.From(err).Reason != ReasonInProgress {
		t.Errorf("reject during an admission: %v, want %s", err, ReasonInProgress)
	}
	os.WriteFile(filepath.Join(f.state, "go"), nil, 0o600)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("paused admission failed: %v", err)
	}
	if got := worktreeTree(t, f.ws); got != want {
		t.Errorf("tree %s, want %s", got, want)
	}
	assertClean(t, f)
}
