//go:build linux

package process

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestChildSurvivesItsCallersThreadExit: a caller that starts a CLI from a
// goroutine locked to its OS thread and then exits (so the runtime ends
// that thread, as the task sandbox's PID 1 starter does) must not take the
// CLI down with it. The parent-death signal is per thread (issue 14: review
// with checks lost its backend to SIGKILL about one run in three).
func TestChildSurvivesItsCallersThreadExit(t *testing.T) {
	const n = 8
	procs := make([]*Proc, n)
	var wg sync.WaitGroup
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // never unlocked: this thread ends with the goroutine
			p, err := Start(context.Background(), Spec{Path: "/bin/sleep", Args: []string{"30"}, Dir: t.TempDir()})
			if err != nil {
				t.Error(err)
				return
			}
			procs[i] = p
		}()
	}
	wg.Wait()
	// More locked goroutines exit meanwhile: any thread the runtime hands
	// them may be one a child was forked from.
	for range 4 * n {
		done := make(chan struct{})
		go func() { runtime.LockOSThread(); close(done) }()
		<-done
	}
	time.Sleep(300 * time.Millisecond)
	for i, p := range procs {
		if p == nil {
			continue
		}
		select {
		case <-p.Done():
			code, why := p.Wait()
			t.Errorf("child %d ended (code %d, end %d, state %v) when its caller's thread exited", i, code, why, p.cmd.ProcessState)
		default:
		}
		p.Kill()
	}
}

// TestBadArgvKeepsIsolation: a start that fails for its own input (a NUL
// byte in argv is EINVAL, like a refused namespace) must not switch every
// later CLI of the process to process-group containment.
func TestBadArgvKeepsIsolation(t *testing.T) {
	refused.Store(false)
	t.Cleanup(func() { refused.Store(false) })
	if _, err := Start(context.Background(), Spec{Path: "/bin/true", Args: []string{"a\x00b"}, Dir: "/"}); err == nil {
		t.Fatal("a NUL byte in argv started")
	}
	p, err := Start(context.Background(), Spec{Path: "/bin/sleep", Args: []string{"5"}, Dir: "/"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if got, want := p.Containment(), "pid-namespace"; got != want {
		t.Errorf("after a bad argv, containment = %q, want %q", got, want)
	}
}
