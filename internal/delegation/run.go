package delegation

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/sandbox"
	"github.com/coagent8/coagent8/internal/secret"
)

// Job is one delegated Claude Code job in the candidate profile. Every
// field is set by trusted code (the governed delegate path, tests), never
// taken from the agent.
type Job struct {
	// Runtime is the pinned CLI ([ResolveRuntime]).
	Runtime Runtime
	// Model is the approved model id the grant binds.
	Model string
	// Prompt is the task given to the agent.
	Prompt string
	// Workspace is the user's directory; it is never written.
	Workspace string
	// CandidateDir is an empty directory that receives the candidate's
	// upper layer (see [sandbox.Candidate]); the caller removes it.
	CandidateDir string
	// Phantom is the grant's phantom credential: the only credential the
	// CLI gets.
	Phantom secret.Value
	// Gate serves the sandbox's only network channel (a *gate.Gate).
	Gate http.Handler
	// Limits are the sandbox limits; zero fields take the sandbox's
	// defaults, memory 2 GiB.
	Limits sandbox.Limits
	// Stdout receives the CLI's stream-json output as it arrives (nil
	// discards); Stderr its diagnostics.
	Stdout, Stderr io.Writer
}

// Result is a finished job.
type Result struct {
	// Receipt is the sandbox's containment receipt (profile candidate).
	Receipt sandbox.Receipt
	// Report is the CLI's verified startup report.
	Report Report
	// Changes is the candidate's changed-file set against Workspace.
	Changes []candidate.Change
}

// Run runs j in the runner's candidate profile with the gate as its only network
// and returns the receipt, the verified startup report and the changes.
// Errors: the sandbox's refusals (fault.SandboxUnavailable,
// fault.InvalidInput); fault.SandboxUnavailable reason
// "delegation.report" when the CLI's startup report differs from the
// profile or is missing (the run is ended as soon as the report is seen);
// candidate's errors reading the changes. A runtime without a passing
// qualification whose digest is the executable's current one refuses
// before anything starts: fault.SandboxUnavailable reason
// "delegation.runtime_unqualified" or "delegation.runtime_digest".
func (r *Runner) Run(ctx context.Context, j Job) (Result, error) {
	if j.Phantom.IsZero() || j.Gate == nil || j.Model == "" {
		return Result{}, fault.New(fault.InvalidInput, "delegation.job", "a delegated job needs a model, a phantom credential and a gate")
	}
	if _, err := r.requireQualified(j.Runtime); err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watch := newReportWatch(orDiscard(j.Stdout), j.Model, cancel)
	spec := claudeSpec(j, sandbox.DefaultGatePort)
	spec.Stdout, spec.Stderr = watch, orDiscard(j.Stderr)
	spec.Gate = func(ln net.Listener) {
		srv := &http.Server{Handler: j.Gate, ReadHeaderTimeout: 10 * time.Second}
		_ = srv.Serve(ln)
	}
	rec, err := r.sb.RunAgent(ctx, spec)
	if err != nil {
		return Result{Receipt: rec}, err
	}
	rep, err := watch.result()
	if err != nil {
		return Result{Receipt: rec}, err
	}
	ch, err := candidate.Changes(j.Workspace, j.CandidateDir+"/upper")
	return Result{Receipt: rec, Report: rep, Changes: ch}, err
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
