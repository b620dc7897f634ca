package delegation

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/crash"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/process"
	"github.com/coagent8/coagent8/internal/sandbox"
	"github.com/coagent8/coagent8/internal/secret"
)

// ReadTurn is one read-only consult or review turn in the sandbox's read
// profile (issue 15 scope 8): the pinned Claude Code sees the workspace
// read-only at /job/workspace, holds only the phantom credential of one
// per-turn grant, and reaches nothing but the gate. Every field is set by
// the governed path, never by the caller of the turn.
type ReadTurn struct {
	// Runtime is the qualified pinned CLI ([ResolveRuntime], [Runner.Qualify]).
	Runtime Runtime
	// Phantom is the grant's phantom credential and PhantomVar the
	// variable Claude Code takes it from: ANTHROPIC_API_KEY for an API
	// key behind the gate, CLAUDE_CODE_OAUTH_TOKEN for a subscription
	// login (so the CLI sends it as a bearer token with its OAuth beta
	// header, as the provider expects of that credential).
	Phantom    secret.Value
	PhantomVar string
	// Gate serves the sandbox's only network channel.
	Gate Gate
	// Reuse says the turn may continue a session chosen only once its
	// lease is held (session_mode auto): [ReadLauncher.Bind] then runs a
	// continued session without read-profile state on the host, where
	// its CLI session lives.
	Reuse bool
}

// PhantomVar is the variable Claude Code takes its phantom from behind
// g: CLAUDE_CODE_OAUTH_TOKEN when g holds a subscription login for
// Anthropic (the CLI then sends it as a bearer token with the OAuth beta
// flag, as the provider expects of that credential), else
// ANTHROPIC_API_KEY.
func PhantomVar(g any) string {
	if k, ok := g.(interface {
		CredentialKind(gate.Provider) (gate.CredentialKind, error)
	}); ok {
		if kind, err := k.CredentialKind(gate.Anthropic); err == nil && kind == gate.OAuthToken {
			return "CLAUDE_CODE_OAUTH_TOKEN"
		}
	}
	return "ANTHROPIC_API_KEY"
}

// phantomVars are the variables a read turn's phantom may be given in.
var phantomVars = map[string]bool{"ANTHROPIC_API_KEY": true, "CLAUDE_CODE_OAUTH_TOKEN": true}

// ReadLauncher starts a backend's read-only turn in the read profile
// ([adapter.Launcher]). One launcher serves one turn.
type ReadLauncher struct {
	r *Runner
	t ReadTurn

	mu   sync.Mutex
	sess launchSession
}

var _ adapter.Launcher = (*ReadLauncher)(nil)

// ReadLauncher returns the launcher of t. Errors: fault.InvalidInput
// reason "delegation.read_turn" for a turn without phantom, variable or
// gate.
func (r *Runner) ReadLauncher(t ReadTurn) (*ReadLauncher, error) {
	if t.Phantom.IsZero() || !phantomVars[t.PhantomVar] || t.Gate == nil || t.Runtime.Executable == "" {
		return nil, fault.New(fault.InvalidInput, "delegation.read_turn", "a read-profile turn needs the runtime, a phantom credential, its variable and a gate")
	}
	return &ReadLauncher{r: r, t: t}, nil
}

// Qualified returns nil when a passing qualification binds rt's
// executable as it is now (its file key unchanged, or else its digest),
// else the refusal Launch would give (fault.SandboxUnavailable).
func (r *Runner) Qualified(rt Runtime) error {
	_, err := r.requireQualified(rt)
	return err
}

// Containment is [adapter.ContainmentKernel], or
// [adapter.ContainmentProfile] for a reused session that [Bind] found
// living on the host.
func (l *ReadLauncher) Containment() string {
	if l.onHost() {
		return adapter.ContainmentProfile
	}
	return adapter.ContainmentKernel
}

// Launch runs s — the backend's own spec: its verified argv, cwd the
// workspace, prompt on stdin — in the read profile. The executable must
// be the qualified runtime (s.Path resolves to Runtime.Executable and a
// passing qualification binds its current digest), else
// fault.SandboxUnavailable reason "delegation.read_runtime",
// "delegation.runtime_unqualified" or "delegation.runtime_digest" and
// nothing runs. The host environment of s is not used: the CLI gets the
// job-scoped allowlist and the phantom only. The sandbox's own refusals
// surface from the stream ([adapter.Proc.Classify]).
//
// In a bound session ([ReadLauncher.Bind]) a --resume of argv's CLI
// session gets the transcript kept under the handle copied into its
// job-scoped config dir, read-write for this run only; a missing,
// corrupt or oversized one refuses (fault.SessionInvalid,
// [ReasonSessionStateMissing], [ReasonSessionStateCorrupt],
// [ReasonSessionStateOversized]) and nothing runs. After a clean run the
// CLI's transcript (at most [MaxSessionTranscript]) replaces the kept
// one. A reused session Bind found on the host starts as the backend
// would without a launcher.
func (l *ReadLauncher) Launch(ctx context.Context, s process.Spec) (adapter.Proc, error) {
	if l.onHost() {
		return process.Start(ctx, s) // exactly what the backend starts without a launcher
	}
	if real, err := filepath.EvalSymlinks(s.Path); err != nil || real != l.t.Runtime.Executable {
		return nil, fault.New(fault.SandboxUnavailable, "delegation.read_runtime",
			"the backend's CLI is not the qualified runtime "+l.t.Runtime.Executable+"; the read profile runs only that one")
	}
	if _, err := l.r.requireQualified(l.t.Runtime); err != nil {
		return nil, err
	}
	keep, err := l.prepareSession(s.Args)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	p := newSandboxProc(cancel)
	spec := readSpec(l.t, s, sandbox.DefaultGatePort)
	if p.keep = keep; keep != nil {
		spec.ScratchIn, spec.ScratchOut = keep.in, keep.out
	}
	spec.Stdout, spec.Stderr = p.outW, &p.stderr
	spec.Gate = func(ln net.Listener) {
		_ = l.t.Gate.Serve(l.t.Gate.Server(l.t.Gate), ln)
	}
	go p.run(ctx, l.r.sb, spec, s)
	return p, nil
}

// readSpec is the sandbox spec of one read turn: s's argv unchanged, the
// workspace projected read-only, the prompt on stdin, Claude Code's
// job-scoped environment with the gate as base URL, and the phantom.
func readSpec(t ReadTurn, s process.Spec, port int) sandbox.AgentSpec {
	spec := sandbox.AgentSpec{GatePort: port, Read: s.Dir, Stdin: bytes.NewReader(s.Stdin),
		Phantom: []string{t.PhantomVar + "=" + t.Phantom.Reveal()}}
	spec.Path, spec.Args = t.Runtime.Executable, s.Args
	spec.Env, spec.ReadOnly = claudeEnv(port), append([]string{t.Runtime.Executable}, existing(caCerts)...)
	spec.Pinned = []sandbox.Pin{runtimePin(t.Runtime)} // mounted = qualified (requireQualified ran by path)
	// The CPU quota is the host's cores, as the CLI gets on the host: the
	// profile confines, it does not slow the turn down (a Bun runtime
	// starts on several threads).
	spec.Limits = sandbox.Limits{Memory: 2 << 30, CPU: int64(runtime.NumCPU()) * 1000,
		Wall: orDefault(s.Deadline, adapter.DefaultDeadline), Output: 64 << 20}
	return spec
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// sandboxProc is a read turn's CLI running in the sandbox, as
// [adapter.Proc]: stdout through a pipe, the supervisor's ending reasons
// (cancel, deadline, idle, kill) kept as process.Proc keeps them.
type sandboxProc struct {
	out      *io.PipeReader
	outW     *io.PipeWriter
	stderr   tailBuffer
	cancel   context.CancelFunc
	done     chan struct{}
	doneOnce sync.Once
	// keep stores the CLI session's transcript after a clean run.
	keep *keptSession

	mu      sync.Mutex
	touched time.Time
	end     process.End
	rec     sandbox.Receipt
	err     error
}

func newSandboxProc(cancel context.CancelFunc) *sandboxProc {
	r, w := io.Pipe()
	return &sandboxProc{out: r, outW: w, cancel: cancel, done: make(chan struct{}), touched: time.Now()}
}

// run runs spec to its end, watching the idle timeout, and closes stdout
// with the sandbox's refusal when there is one (so the backend reports
// that cause, not a missing startup report).
func (p *sandboxProc) run(ctx context.Context, sb *sandbox.Sandbox, spec sandbox.AgentSpec, s process.Spec) {
	defer p.cancel()
	// A panic ends this turn with PROCESS_ERROR internal.panic as its
	// output's error, not the process; the deferred cancel ends the tree.
	defer crash.Stderr.Recover("read turn", p.fail)
	go p.watchIdle(ctx, orDefault(s.IdleTimeout, adapter.DefaultIdleTimeout))
	rec, err := sb.RunAgent(ctx, spec)
	p.mu.Lock()
	p.rec, p.err = rec, err
	if p.end == process.EndNone && ctx.Err() != nil && rec.Exit.Class != sandbox.ExitTimedOut {
		p.end = process.EndCanceled
	}
	if p.end == process.EndNone && rec.Exit.Class == sandbox.ExitTimedOut {
		p.end = process.EndDeadline
	}
	p.mu.Unlock()
	p.keep.finish(err == nil && rec.Exit.Success())
	p.outW.CloseWithError(err)
	p.doneOnce.Do(func() { close(p.done) })
}

// fail ends the turn with err unless it already ended.
func (p *sandboxProc) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
	p.outW.CloseWithError(err) // keeps an earlier error
	p.doneOnce.Do(func() { close(p.done) })
}

func (p *sandboxProc) watchIdle(ctx context.Context, idle time.Duration) {
	t := time.NewTicker(min(idle/4+time.Millisecond, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if p.idleFor() > idle {
				p.stop(process.EndIdle)
				return
			}
		}
	}
}

func (p *sandboxProc) idleFor() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Since(p.touched)
}

func (p *sandboxProc) stop(why process.End) {
	p.mu.Lock()
	if p.end == process.EndNone {
		p.end = why
	}
	p.mu.Unlock()
	p.cancel()
}

// Stdout is the CLI's standard output.
func (p *sandboxProc) Stdout() io.Reader { return p.out }

// Touch records activity for the idle timeout.
func (p *sandboxProc) Touch() {
	p.mu.Lock()
	p.touched = time.Now()
	p.mu.Unlock()
}

// Kill ends the sandbox's tree and waits for it to be gone.
func (p *sandboxProc) Kill() {
	p.stop(process.EndKilled)
	p.out.Close() // a sandbox blocked writing stdout must not wait for a reader
	<-p.done
}

// Wait waits for the run to end: the exit code (-1 unless it exited) and
// why coagent8 ended it.
func (p *sandboxProc) Wait() (int, process.End) {
	// Whatever the CLI still writes after the record the backend stopped
	// at is discarded, so the CLI never blocks on a full pipe.
	go func() { _, _ = io.Copy(io.Discard, p.out) }()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rec.Exit.Code, p.end
}

// Ended describes how the CLI ended, "" while it runs.
func (p *sandboxProc) Ended() string {
	select {
	case <-p.done:
	default:
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rec.Exit.Class == sandbox.ExitSignalled {
		return "was killed by " + p.rec.Exit.Signal
	}
	return fmt.Sprintf("exited with status %d", p.rec.Exit.Code)
}

// Classify maps a stream error as process.Proc does; a sandbox refusal
// is its own error.
func (p *sandboxProc) Classify(err error) error {
	p.mu.Lock()
	end, runErr := p.end, p.err
	p.mu.Unlock()
	switch {
	case end == process.EndCanceled:
		return fault.New(fault.Aborted, "turn.cancelled", "The turn was cancelled.")
	case end == process.EndDeadline:
		return fault.New(fault.Timeout, "turn.deadline", "CLI deadline exceeded.")
	case end == process.EndIdle:
		return fault.New(fault.Timeout, "turn.idle", "CLI produced no output within the idle timeout.")
	case runErr != nil:
		return runErr
	}
	return err
}

// tailBuffer keeps the last 64 KiB of the CLI's diagnostics.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if over := len(t.b) - 64<<10; over > 0 {
		t.b = t.b[over:]
	}
	return len(b), nil
}
