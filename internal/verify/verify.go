package verify

import (
	"context"
	"io"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// Defaults for one check when the configuration leaves them out.
const (
	DefaultTimeout   = 10 * time.Minute
	DefaultMemoryMiB = 2048
	// cpuMillicores lets a test suite use two cores; pidsMax leaves room
	// for a build's parallel compilers and test binaries.
	cpuMillicores = 2000
	pidsMax       = 512
)

// Config configures a [Verifier].
type Config struct {
	// Sandbox runs the checks. Nil makes every check "not run" (a server
	// without a task sandbox never runs a configured command unsandboxed).
	Sandbox *sandbox.Sandbox
	// Home is the user's home directory, rewritten to "~" in output tails.
	Home string
	// GoModCache is an optional canonical host directory (the user's Go
	// module cache) bound read-only so Go checks can build with modules
	// already downloaded; with GOPROXY=off nothing is fetched. Empty binds
	// nothing. Paths under /tmp cannot be bound (the sandbox synthesizes
	// its own /tmp).
	GoModCache string
}

// Verifier runs configured checks. It is safe for concurrent use.
type Verifier struct {
	cfg Config
	red *redact.Redactor
}

// New returns a Verifier. GoModCache, when set, must be absolute.
func New(cfg Config) (*Verifier, error) {
	if cfg.GoModCache != "" {
		if err := sandbox.CheckPath(cfg.GoModCache); err != nil {
			return nil, fault.New(fault.InvalidInput, "verify.config", "the Go module cache must be a canonical absolute path")
		}
	}
	return &Verifier{cfg: cfg, red: redact.NewDiagnostic(cfg.Home)}, nil
}

// Run runs every command of set (already resolved: see
// [config.Verify.Resolve]) in order, each in its own sandbox on a fresh
// copy of workspace, and returns one [Check] per command. A check that
// cannot run is [NotRun] with the reason; Run itself never fails.
func (v *Verifier) Run(ctx context.Context, workspace string, set config.Verify) []Check {
	return v.each(ctx, set, func(sb *sandbox.Sandbox, spec sandbox.Spec) (sandbox.Receipt, error) {
		spec.Input = workspace
		return sb.Run(ctx, spec)
	})
}

// RunCandidate runs every command of set (already resolved) in order on
// a delegated job's candidate, each in its own sandbox of the verify
// profile ([sandbox.Sandbox.RunVerify]): the candidate's upper directory
// upper stacked read-only on workspace, no network, the same check tools
// and limits as [Verifier.Run]. It returns one [Check] per command; a
// check that cannot run is [NotRun] with the reason. It never fails and
// never writes workspace or upper.
func (v *Verifier) RunCandidate(ctx context.Context, workspace, upper string, set config.Verify) []Check {
	return v.each(ctx, set, func(sb *sandbox.Sandbox, spec sandbox.Spec) (sandbox.Receipt, error) {
		return sb.RunVerify(ctx, sandbox.VerifySpec{Spec: spec, Workspace: workspace, Upper: upper})
	})
}

// runFunc runs one admitted check spec in a profile.
type runFunc func(*sandbox.Sandbox, sandbox.Spec) (sandbox.Receipt, error)

func (v *Verifier) each(ctx context.Context, set config.Verify, run runFunc) []Check {
	out := make([]Check, 0, len(set.Commands))
	env := childEnv(set.Commands, v.cfg.GoModCache)
	for _, argv := range set.Commands {
		out = append(out, v.one(ctx, run, argv, set, env))
	}
	return out
}

func (v *Verifier) one(ctx context.Context, run runFunc, argv []string, set config.Verify, env []string) Check {
	c := Check{Command: argv, Kind: KindOf(argv), ExitCode: -1}
	if v.cfg.Sandbox == nil {
		return notRun(c, "no task sandbox is configured in this server")
	}
	if err := ctx.Err(); err != nil {
		return notRun(c, "the review was cancelled before this check started")
	}
	stdout, stderr := newTail(TailBytes), newTail(TailBytes)
	ro, rerr := v.red.Writer(stdout), v.red.Writer(stderr)
	r, err := run(v.cfg.Sandbox, v.spec(argv, set, env, ro, rerr))
	ro.Close()
	rerr.Close()
	if err != nil {
		// A refusal, or a run whose receipt could not be recorded: never a
		// pass, whatever the command did.
		c = notRun(c, v.red.String(reason(err)))
		if r.JobID != "" {
			c.Receipt = receiptOf(r)
		}
		return c
	}
	c.Exit, c.ExitCode, c.Signal = r.Exit.Class.String(), r.Exit.Code, r.Exit.Signal
	c.DurationMS, c.Receipt = r.RunMS, receiptOf(r)
	c.StdoutTail, c.StderrTail = stdout.String(), stderr.String()
	c.Status = Failed
	if r.Exit.Success() && r.TreeEmpty {
		c.Status = Passed
	}
	return c
}

func (v *Verifier) spec(argv []string, set config.Verify, env []string, stdout, stderr io.Writer) sandbox.Spec {
	ro := append([]string(nil), set.ReadOnly...)
	if v.cfg.GoModCache != "" {
		ro = append(ro, v.cfg.GoModCache)
	}
	lim := sandbox.Limits{Memory: DefaultMemoryMiB << 20, Wall: DefaultTimeout, CPU: cpuMillicores, Pids: pidsMax}
	if set.MemoryMiB > 0 {
		lim.Memory = set.MemoryMiB << 20
	}
	if set.Timeout > 0 {
		lim.Wall = set.Timeout
	}
	return sandbox.Spec{Path: argv[0], Args: argv[1:], ReadOnly: ro, Env: env,
		Limits: lim, Stdout: stdout, Stderr: stderr}
}

func notRun(c Check, why string) Check {
	c.Status, c.Reason = NotRun, why
	return c
}

// reason is the public message of err with its reason code, e.g. "the task
// sandbox is unavailable: … (audit.sink_unwritable)".
func reason(err error) string {
	fe := fault.From(err)
	if fe.Reason == "" {
		return fe.Message
	}
	return fe.Message + " (" + fe.Reason + ")"
}
