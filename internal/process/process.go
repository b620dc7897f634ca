// Package process supervises one backend CLI process: explicit executable,
// explicit directory and environment, no shell, stdin written then closed
// (or kept for JSON-RPC), bounded stderr, an absolute deadline and an idle
// timeout, and teardown of the whole process tree on cancel, timeout or
// server exit.
//
// # Containment of the tree
//
// On Linux each CLI is started as the first process of a new PID namespace
// (with a user namespace when not root) and with a parent-death signal.
// Killing that first process makes the kernel kill every process in the
// namespace, including grandchildren that called setsid or ignore SIGTERM,
// and a SIGKILL of coagent8 itself takes the namespace down with it
// (issue 2 §4, issue 6 §6). The parent-death signal is tied to the forking
// OS thread, so each CLI is forked from a thread held for its whole life
// (see spawn). Where namespaces are unavailable the process
// group is used and [Proc.Containment] says so. Other platforms use the
// process group (darwin) or the process (windows) and say so.
//
// Teardown order (style guideline 15): close stdin → wait → SIGTERM to the
// group → wait [Grace] → SIGKILL the tree.
package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// Grace is how long a tree gets between SIGTERM and SIGKILL.
const Grace = 250 * time.Millisecond

// Spec describes one process. Path must be absolute (see [Resolve]).
type Spec struct {
	Path string
	Args []string // argv[1:]
	Dir  string
	Env  []string // complete environment, KEY=VALUE
	// Stdin, if non-nil, is written to the process and then stdin is closed.
	// If nil and KeepStdin is false, stdin is /dev/null.
	Stdin []byte
	// KeepStdin gives the caller the stdin pipe ([Proc.Stdin]) instead.
	KeepStdin bool
	// Deadline is the absolute lifetime (0 = none).
	Deadline time.Duration
	// IdleTimeout ends the process when [Proc.Touch] was not called for this
	// long (0 = none).
	IdleTimeout time.Duration
	// StderrLimit bounds the kept stderr tail in bytes (0 = 512 KiB).
	StderrLimit int
}

// End says why a process ended, when coagent8 ended it.
type End int

// End reasons.
const (
	EndNone     End = iota // exited by itself
	EndCanceled            // the context was cancelled
	EndDeadline            // Spec.Deadline passed
	EndIdle                // no activity for Spec.IdleTimeout
	EndKilled              // Kill was called (e.g. a verification failed)
)

// Proc is a running supervised process.
type Proc struct {
	cmd         *exec.Cmd
	stdout      io.ReadCloser
	stdin       io.WriteCloser
	stderr      *tail
	containment string

	mu      sync.Mutex
	end     End
	touched time.Time
	done    chan struct{}
	waitErr error
	once    sync.Once
}

// Start starts the process and its supervisor. The process is torn down
// when ctx is done. Errors are *fault.Error (PROCESS_ERROR).
func Start(ctx context.Context, s Spec) (*Proc, error) {
	started := make(chan startResult, 1)
	go spawn(s, started)
	res := <-started
	if res.err != nil {
		return nil, startError(s.Path, res.err)
	}
	p := res.p
	go p.supervise(ctx, s)
	if s.Stdin != nil && !s.KeepStdin {
		go p.feed(s.Stdin)
	}
	return p, nil
}

type startResult struct {
	p   *Proc
	err error
}

// spawn starts the process from an OS thread that stays locked to this
// goroutine until the process has been reaped, then unlocks it.
//
// Why: the parent-death signal belongs to the thread that forked the
// child, not to the process (prctl(2) PR_SET_PDEATHSIG; go.dev/issue/27505).
// The Go runtime ends the thread of any goroutine that exits while locked
// to it, as the task sandbox's PID 1 starter does (sandbox/pid1_linux.go);
// a backend forked earlier from that same thread by another goroutine then
// received SIGKILL mid-turn (issue 14: review with checks lost its backend
// about one run in three). A thread held here for the child's whole life
// can be neither locked nor ended by anyone else, so the signal keeps its
// one meaning: coagent8 died.
func spawn(s Spec, started chan<- startResult) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	isolated := isolate()
	p, err := start(s, isolated)
	if err != nil && isolated && isolationRefused(err) {
		// The host may refuse new namespaces (e.g. no user namespaces):
		// try the process group. Only when that start works was it the
		// namespaces (a bad argv fails with EINVAL too), and the process
		// group is used from then on; Containment says so.
		if p, err = start(s, false); err == nil {
			noIsolation()
		}
	}
	started <- startResult{p: p, err: err}
	if err == nil {
		p.wait()
	}
}

// start creates the pipes and starts the first process; errors are raw.
func start(s Spec, isolated bool) (*Proc, error) {
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	containment := configure(cmd, isolated)
	limit := s.StderrLimit
	if limit <= 0 {
		limit = 512 << 10
	}
	p := &Proc{cmd: cmd, stderr: newTail(limit), containment: containment, done: make(chan struct{}), touched: time.Now()}
	cmd.Stderr = p.stderr
	// An os.Pipe rather than StdoutPipe: Wait must not close our read end
	// before the stream is drained (os/exec closes StdoutPipe on Wait).
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p.stdout = r
	cmd.Stdout = w
	if s.Stdin != nil || s.KeepStdin {
		if p.stdin, err = cmd.StdinPipe(); err != nil {
			r.Close()
			w.Close()
			return nil, err
		}
	}
	err = cmd.Start()
	w.Close() // the child holds its copy; EOF comes when the tree is gone
	if err != nil {
		r.Close()
		if p.stdin != nil {
			p.stdin.Close()
		}
		return nil, err
	}
	return p, nil
}

func startError(path string, err error) error {
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
		return fault.Wrap(fault.CLINotFound, "process.not_found", fmt.Sprintf("executable not found: %s", path), err)
	}
	return fault.Wrap(fault.ProcessError, "process.start", "could not start the CLI", err)
}

// feed writes the prompt and closes stdin so the CLI sees EOF (CLIs hang
// until EOF: backends.md §0). A write error means the child exited early;
// its exit status tells the story, so the error is dropped here.
func (p *Proc) feed(b []byte) {
	_, _ = p.stdin.Write(b)
	_ = p.stdin.Close()
}

func (p *Proc) wait() {
	err := p.cmd.Wait()
	p.mu.Lock()
	p.waitErr = err
	p.mu.Unlock()
	close(p.done)
}

func (p *Proc) supervise(ctx context.Context, s Spec) {
	var deadline <-chan time.Time
	if s.Deadline > 0 {
		t := time.NewTimer(s.Deadline)
		defer t.Stop()
		deadline = t.C
	}
	var idle <-chan time.Time
	if s.IdleTimeout > 0 {
		t := time.NewTicker(idleTick(s.IdleTimeout))
		defer t.Stop()
		idle = t.C
	}
	for {
		select {
		case <-p.done:
			p.killTree() // reap anything the first process left behind
			return
		case <-ctx.Done():
			p.terminate(EndCanceled)
		case <-deadline:
			p.terminate(EndDeadline)
		case <-idle:
			if p.idleFor() >= s.IdleTimeout {
				p.terminate(EndIdle)
			}
		}
	}
}

func idleTick(d time.Duration) time.Duration {
	if t := d / 4; t > 10*time.Millisecond {
		return t
	}
	return 10 * time.Millisecond
}

func (p *Proc) idleFor() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Since(p.touched)
}

// Touch records activity (call it for every line read) for the idle timeout.
func (p *Proc) Touch() {
	p.mu.Lock()
	p.touched = time.Now()
	p.mu.Unlock()
}

// terminate records why and tears the tree down (first reason wins).
func (p *Proc) terminate(why End) {
	p.once.Do(func() {
		p.mu.Lock()
		p.end = why
		p.mu.Unlock()
		go p.teardown()
	})
}

func (p *Proc) teardown() {
	if p.stdin != nil {
		_ = p.stdin.Close()
	}
	p.signalGroup(sigTerm)
	select {
	case <-p.done:
	case <-time.After(Grace):
	}
	p.killTree()
}

// Kill tears the whole tree down now (e.g. a verification failed) and
// waits for the first process to exit.
func (p *Proc) Kill() {
	p.once.Do(func() {
		p.mu.Lock()
		p.end = EndKilled
		p.mu.Unlock()
	})
	p.killTree()
	<-p.done
}

// Stdout returns the process's standard output.
func (p *Proc) Stdout() io.Reader { return p.stdout }

// Stdin returns the stdin pipe when Spec.KeepStdin was set, else nil.
func (p *Proc) Stdin() io.WriteCloser { return p.stdin }

// Stderr returns the kept tail of standard error (unredacted: callers
// redact with the diagnostic profile before it goes anywhere).
func (p *Proc) Stderr() string { return p.stderr.String() }

// Pid returns the first process's pid in coagent8's namespace.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Containment describes how the tree is contained, e.g. "pid-namespace".
func (p *Proc) Containment() string { return p.containment }

// Done is closed when the first process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Wait waits for the first process to exit and returns its exit code (-1 if
// signalled) and why coagent8 ended it, if it did.
func (p *Proc) Wait() (code int, why End) {
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	code = p.cmd.ProcessState.ExitCode()
	return code, p.end
}

// EndReason reports why coagent8 ended the process so far (EndNone if it
// did not).
func (p *Proc) EndReason() End {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.end
}

// Classify returns the error a turn should report when its stream ended
// with err: the supervisor's own reason wins (cancel → ABORTED, deadline
// or idle → TIMEOUT), because that reason caused the stream error.
func (p *Proc) Classify(err error) error {
	switch p.EndReason() {
	case EndCanceled:
		return fault.New(fault.Aborted, "turn.cancelled", "The turn was cancelled.")
	case EndDeadline:
		return fault.New(fault.Timeout, "turn.deadline", "CLI deadline exceeded.")
	case EndIdle:
		return fault.New(fault.Timeout, "turn.idle", "CLI produced no output within the idle timeout.")
	}
	return err
}

// Ended describes how the first process ended, for error messages: "exited
// with status N" or "was killed by SIGNAME"; "" while it runs. Whether
// coagent8 ended it is [Proc.EndReason]'s to say.
func (p *Proc) Ended() string {
	select {
	case <-p.done:
	default:
		return ""
	}
	st := p.cmd.ProcessState
	if ws, ok := st.Sys().(interface {
		Signaled() bool
		Signal() syscall.Signal
	}); ok && ws.Signaled() {
		return "was killed by " + signalName(ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", st.ExitCode())
}
