package delegation

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/sandbox"
	"github.com/coagent8/coagent8/internal/secret"
)

// Job is one delegated job (Claude Code or Codex, by Runtime.Backend) in
// the candidate profile. Every
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
	// Seeded says CandidateDir already holds upper/, the layer's
	// starting content ([sandbox.Candidate.Seeded]: a base commit other
	// than the checkout's HEAD, quarantine.SeedBase).
	Seeded bool
	// Phantom is the grant's phantom credential: the only credential the
	// CLI gets.
	Phantom secret.Value
	// Gate serves the sandbox's only network channel (a *gate.Gate).
	Gate Gate
	// Grant is the id of the grant Phantom belongs to: revoked when the
	// job is cancelled or its startup report refuses it.
	Grant string
	// Limits are the sandbox limits; zero fields take the sandbox's
	// defaults, memory 2 GiB.
	Limits sandbox.Limits
	// Stdout receives the CLI's output as it arrives (nil discards):
	// Claude Code's stream-json, Codex's app-server JSON-RPC transcript
	// (what the app-server wrote); Stderr its diagnostics.
	Stdout, Stderr io.Writer
}

// Gate is what a job needs of the provider gate (*gate.Gate).
type Gate interface {
	http.Handler
	// Revoke ends grant id and cuts its streams in flight.
	Revoke(ctx context.Context, id string) error
	// Inspect returns grant id with its counters.
	Inspect(ctx context.Context, id string) (gate.Grant, error)
	// ForJob returns the handler restricted to job's grants: another
	// job's phantom is refused and contains that job.
	ForJob(job string) http.Handler
	// Server and Serve serve a handler of the gate on a listener so that
	// net/http's own refusals are counted and recorded too.
	Server(h http.Handler) *http.Server
	Serve(srv *http.Server, ln net.Listener) error
}

var _ Gate = (*gate.Gate)(nil)

// Result is a finished job.
type Result struct {
	// Receipt is the sandbox's containment receipt (profile candidate).
	Receipt sandbox.Receipt
	// Report is Claude Code's verified startup report (zero for Codex).
	Report Report
	// Codex is Codex's verified startup report (nil for Claude Code).
	Codex *CodexReport
	// Final is Codex's final agent message (the last agentMessage item
	// of its turn): untrusted text. Empty for Claude Code, whose final
	// message is its stream-json result event in Stdout.
	Final string
	// Changes is the candidate's changed-file set against Workspace.
	Changes []candidate.Change
	// Grant is the job's grant after the run: its state and final
	// counters (requests, tokens, spend), for the job's receipt.
	Grant gate.Grant
	// Tainted reports a containment event during the job: the gate
	// revoked the grant itself (a phantom on an unadmitted route, a
	// credential in a request, …: the gate's compromise event names it).
	// Tainted changes must never be offered for admission without the
	// user seeing TaintReason.
	Tainted     bool
	TaintReason string
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
	if j.Phantom.IsZero() || j.Gate == nil || j.Model == "" || j.Grant == "" {
		return Result{}, fault.New(fault.InvalidInput, "delegation.job", "a delegated job needs a model, a grant, its phantom credential and a gate")
	}
	if _, err := r.requireQualified(j.Runtime); err != nil {
		return Result{}, err
	}
	serve, err := jobHandler(ctx, j)
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Cancellation, the caller's or the report watch's, revokes the grant
	// (cutting its streams at the gate) as the sandbox kills the tree:
	// neither outlives the other.
	revoked := make(chan error, 1)
	stopRevoke := context.AfterFunc(ctx, func() { revoked <- j.Gate.Revoke(context.WithoutCancel(ctx), j.Grant) })
	defer stopRevoke()
	spec := jobSpec(j, sandbox.DefaultGatePort)
	var watch *reportWatch
	var cs *codexSession
	if j.Runtime.IsCodex() {
		// Codex's report arrives as JSON-RPC results over stdio: the
		// session asks for it, verifies it and only then starts the turn.
		cs = newCodexSession(j.Model, j.Prompt, orDiscard(j.Stdout), cancel)
		spec.Stdout, spec.Stdin = cs.stdout(), cs.inR
		go cs.drive(ctx)
	} else {
		watch = newReportWatch(orDiscard(j.Stdout), j.Model, cancel)
		spec.Stdout = watch
	}
	spec.Stderr = orDiscard(j.Stderr)
	spec.Gate = func(ln net.Listener) {
		_ = j.Gate.Serve(j.Gate.Server(serve), ln)
	}
	rec, err := r.sb.RunAgent(ctx, spec)
	if cs != nil {
		cs.close() // before cancelled is read: a session failure cancels
	}
	cancelled := ctx.Err() != nil
	if cancelled {
		rerr := j.Gate.Revoke(context.WithoutCancel(ctx), j.Grant) // idempotent; covers an AfterFunc not yet started
		if !stopRevoke() {
			rerr = errors.Join(rerr, <-revoked)
		}
		if rerr != nil && err == nil {
			err = fault.Wrap(fault.ProcessError, "delegation.revoke", "the job was cancelled but its grant could not be revoked", rerr)
		}
	}
	if err != nil {
		return Result{Receipt: rec}, err
	}
	gr, gerr := settled(ctx, j.Gate, j.Grant)
	res := Result{Receipt: rec, Grant: gr}
	if gr.State == gate.Revoked && !cancelled {
		// Nobody here revoked it: the gate did, on a containment signal.
		res.Tainted, res.TaintReason = true, "the gate revoked the job's grant during the job (containment event; see the compromise event)"
	}
	if cs != nil {
		var crep CodexReport
		crep, res.Final, err = cs.result()
		if err != nil {
			return res, err
		}
		res.Codex = &crep
	} else {
		if res.Report, err = watch.result(); err != nil {
			return res, err
		}
	}
	res.Changes, err = candidate.Changes(j.Workspace, j.CandidateDir+"/upper")
	return res, errors.Join(err, gerr)
}

// jobHandler is the gate as j's sandbox reaches it: restricted to the
// job of j's grant, so a phantom that leaked in from another job's
// sandbox is refused and contains that job (gate.SignalOtherJob). Served
// the shared gate, the sandbox could spend any live grant unnoticed (red
// team 3). A grant that cannot be read refuses the job: PROCESS_ERROR
// delegation.grant, coagent8's own failure (the governor made it).
func jobHandler(ctx context.Context, j Job) (http.Handler, error) {
	gr, err := j.Gate.Inspect(ctx, j.Grant)
	if err != nil {
		return nil, fault.Wrap(fault.ProcessError, "delegation.grant", "the job's grant cannot be read", err)
	}
	return j.Gate.ForJob(gr.Job), nil
}

// settleWait bounds the wait for the gate to settle the job's last
// stream after the CLI exited (its reservation is replaced by the
// metered usage when the stream's end is seen).
const settleWait = 2 * time.Second

// settled returns grant id once no reservation is open, or as it is
// after settleWait.
func settled(ctx context.Context, g Gate, id string) (gate.Grant, error) {
	ctx = context.WithoutCancel(ctx)
	deadline := time.Now().Add(settleWait)
	for {
		gr, err := g.Inspect(ctx, id)
		if err != nil {
			return gr, fault.Wrap(fault.ProcessError, "delegation.grant", "the job's grant cannot be read back", err)
		}
		if gr.Reserved == (gate.Counters{}) || time.Now().After(deadline) {
			return gr, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
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
