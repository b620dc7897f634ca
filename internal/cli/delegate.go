package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/process"
	"github.com/coagent8/coagent8/internal/sandbox"
	"github.com/coagent8/coagent8/internal/store"
	"github.com/coagent8/coagent8/internal/upstream"
)

// UnsafeUpstreamVar is [upstream.UnsafeVar]: a loopback provider
// double for tests and benchmarks ([upstream.ParseUnsafe]).
const UnsafeUpstreamVar = upstream.UnsafeVar

// lazyDelegation opens what delegate jobs run on — the job store, the
// in-process gate, the candidate sandbox and the qualified pinned Claude
// Code or Codex — on the first approved job, and closes it with the stack.
type lazyDelegation struct {
	a      *app
	log    *slog.Logger
	events event.Sink

	mu       sync.Mutex
	closers  []func()
	runtimes runtimeCache
}

func (l *lazyDelegation) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.closers) - 1; i >= 0; i-- {
		l.closers[i]()
	}
	l.closers = nil
}

func (l *lazyDelegation) open(ctx context.Context) (_ governor.DelegateDeps, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	mark := len(l.closers)
	defer func() {
		if err != nil { // the governor retries on the next job: release this attempt's handles
			for i := len(l.closers) - 1; i >= mark; i-- {
				l.closers[i]()
			}
			l.closers = l.closers[:mark]
		}
	}()
	a := l.a
	dir := a.env.StateDir()
	db, err := store.Open(ctx, filepath.Join(dir, "state.db"), sessionBusy)
	if err != nil {
		return governor.DelegateDeps{}, err
	}
	l.closers = append(l.closers, func() { db.Close() })
	jobs, err := job.Open(ctx, db)
	if err != nil {
		return governor.DelegateDeps{}, err
	}
	g, err := l.gate(ctx)
	if err != nil {
		return governor.DelegateDeps{}, err
	}
	sb, err := sandbox.New(sandbox.Config{StateDir: dir, AutoQualify: true, Events: l.events})
	if err != nil {
		return governor.DelegateDeps{}, err
	}
	runner, err := delegation.NewRunner(sb, dir)
	if err != nil {
		return governor.DelegateDeps{}, err
	}
	// Candidate layers live outside the state directory (the sandbox
	// refuses roots that overlap it), private to this user.
	cands := filepath.Join(os.TempDir(), fmt.Sprintf("coagent8-candidates-%d", os.Getuid()))
	if err := os.MkdirAll(cands, 0o700); err != nil {
		if _, serr := os.Lstat(cands); serr == nil {
			if perr := privateDir(cands); perr != nil {
				return governor.DelegateDeps{}, perr // something else is there: say what
			}
		}
		return governor.DelegateDeps{}, fault.Wrap(fault.ProcessError, "delegate.candidates",
			"the candidate directory "+cands+" cannot be made: set TMPDIR to a private directory you can write", err)
	}
	if err := privateDir(cands); err != nil {
		return governor.DelegateDeps{}, err
	}
	return governor.DelegateDeps{Jobs: jobs, Gate: g, Runner: runner, WorkDir: filepath.Join(dir, "jobs"), CandidateDir: cands,
		Runtime: func(ctx context.Context, backend string) (delegation.Runtime, error) {
			return l.runtime(ctx, runner, backend)
		}}, nil
}

// gate opens the in-process gate with the user's declared credentials
// and egress policy (as `coagent8 gate serve`).
func (l *lazyDelegation) gate(ctx context.Context) (*gate.Gate, error) {
	a := l.a
	// The test seam is checked first: a bad value must refuse the job
	// whatever else is configured.
	var unsafe *upstream.Unsafe
	if v := a.env.Get(UnsafeUpstreamVar); v != "" {
		u, err := upstream.ParseUnsafe(v)
		if err != nil {
			return nil, err
		}
		unsafe = &u
	}
	creds, err := a.gateCredentials()
	if err != nil {
		return nil, err
	}
	hops, err := a.gateIntermediaries()
	if err != nil {
		return nil, err
	}
	opts := gate.Options{Credentials: creds, Intermediaries: hops}
	if u := unsafe; u != nil {
		opts.Upstreams, opts.UnsafeAllowLoopbackUpstream = map[gate.Provider]string{gate.Provider(u.Provider): u.Origin}, true
		// The override sends the real credential to a local process: the
		// security log says so before any job of this stack uses it.
		_ = l.events.Record(event.Event{Type: event.TypeDecision, Time: time.Now(), Reason: upstream.ReasonUnsafe,
			IDs:    map[string]string{"provider": u.Provider, "upstream": u.Origin},
			Detail: UnsafeUpstreamVar + " overrides the " + u.Provider + " upstream with " + u.Origin + ": the real credential goes to that local process"})
	}
	decide := func(ctx context.Context, db *store.DB, events event.Sink) (gate.EgressDecider, error) {
		d, _, err := a.egressDecider(ctx, db, events, "")
		return d, err
	}
	g, closeFn, err := a.openGate(ctx, opts, decide)
	if err != nil {
		return nil, err
	}
	l.closers = append(l.closers, closeFn)
	return g, nil
}

// runtime resolves and qualifies the pinned CLI of backend: Claude Code,
// or Codex's native binary behind its npm launcher (the governor refuses
// the others first).
func (l *lazyDelegation) runtime(ctx context.Context, r *delegation.Runner, backend string) (delegation.Runtime, error) {
	resolve, name, pathVar, label := delegation.ResolveRuntime, "claude", "CLAUDE_PATH", "Claude Code"
	switch backend {
	case "claude":
	case "codex":
		resolve, name, pathVar, label = delegation.ResolveCodexRuntime, "codex", "CODEX_PATH", "Codex"
	default:
		return delegation.Runtime{}, fault.New(fault.Unsupported, governor.ReasonBackend, "delegate runs Claude Code and Codex only")
	}
	path, _, err := process.Resolve(l.a.env, name, pathVar)
	if err != nil {
		return delegation.Runtime{}, err
	}
	key := backend + "\x00" + path
	if rt, ok := l.runtimes.get(key, path); ok {
		return rt, nil
	}
	fi, err := os.Stat(path) // before the digest: a write after it is seen by the next get
	if err != nil {
		return delegation.Runtime{}, fault.Wrap(fault.CLINotFound, "delegation.runtime", "the delegated CLI cannot be read", err)
	}
	rt, err := resolve(path)
	if err != nil {
		return rt, err
	}
	q, err := r.Qualify(ctx, rt)
	if err != nil {
		return rt, err
	}
	if !q.Passed {
		return rt, fault.New(fault.SandboxUnavailable, "delegation.runtime_unqualified",
			"the pinned "+label+" did not qualify for the candidate profile on this host: "+q.Detail)
	}
	l.runtimes.put(key, rt, fi)
	return rt, nil
}

type delegateOptions struct {
	task, workspace, backend, model, effort, base string
	// effortFlag is the name the user gave the effort by: --effort, or
	// its alias --reasoning-effort ("" when none was given).
	effortFlag string
	budget     job.Budget
}

// newDelegateCmd is `coagent8 delegate` (issue 16 scope 1): a delegate job
// from a terminal. A terminal cannot ask, so the job runs only for a model
// that governance allows and delegate.allowWithoutAsking names; it runs in
// the foreground (this process supervises it) and prints the job.
func newDelegateCmd(a *app) *cobra.Command {
	var o delegateOptions
	c := &cobra.Command{
		Use:   "delegate TASK",
		Short: "Run a delegate job: a sandboxed agent edits a copy of the workspace; admit the result with `coagent8 admit JOB`",
		Args:  wantArgs("TASK"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.task = args[0]
			for _, name := range []string{"reasoning-effort", "effort"} { // --effort wins when both are given
				if cmd.Flags().Changed(name) {
					o.effortFlag = "--" + name
				}
			}
			return a.delegate(cmd.Context(), o)
		},
	}
	fl := c.Flags()
	fl.StringVar(&o.workspace, "workspace", "", "the Git work tree's top level (default: the current directory)")
	fl.StringVar(&o.backend, "backend", "claude", "claude, codex, or auto (= claude); agy is not supported yet")
	fl.StringVar(&o.model, "model", "", "model id (default: the backend's default; still governed)")
	fl.StringVar(&o.effort, "effort", "", "not applied to delegate jobs in this version: refused (the agent runs at the model's default effort); --reasoning-effort is its old name")
	// The old name stays an alias: a script that passes it is refused by
	// that name, as --effort is.
	fl.StringVar(&o.effort, "reasoning-effort", "", "alias of --effort")
	_ = fl.MarkHidden("reasoning-effort")
	fl.StringVar(&o.base, "base", "", "HEAD (default), another commit (id, branch, tag, HEAD~2: the patch is then relative to it), or uncommitted (the working tree as it is, untracked files included); a commit needs the tracked files unchanged")
	fl.Float64Var(&o.budget.MaxUSD, "max-usd", 0, "spend budget in USD (required; above 0, at most delegate.maxUSD, never above 10000)")
	fl.IntVar(&o.budget.MaxMinutes, "max-minutes", 0, "wall-clock budget in minutes, 0..1440 (0 and ceiling: delegate.maxMinutes)")
	fl.IntVar(&o.budget.MaxRequests, "max-requests", 0, "model request budget, 0..10000 (0 = 200)")
	return c
}

func (a *app) delegate(ctx context.Context, o delegateOptions) error {
	if o.effortFlag != "" && o.effort != "" {
		// The governor refuses any effort too, naming the MCP argument
		// (reasoning_effort); a terminal user typed a flag.
		return fault.New(fault.InvalidInput, governor.ReasonEffort, o.effortFlag+
			" is not applied to delegate jobs in this version (the agent runs at the model's default effort): omit it").With("flag", o.effortFlag)
	}
	if err := checkDelegateBudget(o.budget); err != nil {
		return err
	}
	ws, err := a.jobWorkspace(o.workspace)
	if err != nil {
		return err
	}
	st, err := a.build(ctx)
	if err != nil {
		return err
	}
	defer st.close()
	v, err := st.gov.Delegate(ctx, governor.DelegateTask{Task: o.task, Backend: o.backend, Workspace: ws, Model: o.model,
		Effort: o.effort, Base: o.base, Budget: o.budget, Wait: true})
	if err != nil {
		return err
	}
	if perr := a.printJSON(v); perr != nil {
		return perr
	}
	if v.State == job.Failed.String() {
		return delegateFailed(v)
	}
	return nil
}

// delegateFailed is the typed error of a job that ended failed: its
// cause in words (the time limit is TIMEOUT, anything else
// PROCESS_ERROR), the job's reason, and where its detail is. A plain
// error would reach the terminal as "internal error" (fault.From).
func delegateFailed(v governor.JobView) error {
	code, cause := fault.ProcessError, ""
	switch {
	case v.Reason == governor.ReasonTimeLimit:
		code, cause = fault.Timeout, fmt.Sprintf(": its agent was still working when its %d minutes ran out", v.Budget.MaxMinutes)
	case v.Reason == governor.ReasonBudgetExhausted:
		cause = ": its agent stopped once the gate refused a request for the job's budget"
	case v.Reason == governor.ReasonBudgetBelowRequest:
		cause = fmt.Sprintf(": the gate refused its agent's request because that one request reserves more than the job's whole budget of $%g; give a larger --max-usd", v.Budget.MaxUSD)
	case v.Reason == governor.AgentEndedReason(sandbox.ExitExited):
		cause = ": its agent exited with an error"
	}
	reason := v.Reason
	if reason == "" {
		reason = "delegate.failed" // never stored empty; named all the same
	}
	return fault.New(code, reason, fmt.Sprintf(
		"delegate job %s failed%s; `coagent8 jobs %s` shows the job and `coagent8 audit` the gate's decisions on its requests",
		v.Job, cause, v.Job)).With("job", v.Job)
}

// checkDelegateBudget refuses budget flags outside the documented ranges
// ([config.CheckBudgetUSD], [config.MaxBudgetRequests],
// [config.MaxBudgetMinutes]) before anything is opened. Zero and negative
// values are left to the governor, which names them the same way for MCP
// and terminal callers (budget.missing, budget.invalid).
func checkDelegateBudget(b job.Budget) error {
	if !(b.MaxUSD <= 0) { // NaN and +Inf included
		if err := config.CheckBudgetUSD("--max-usd", b.MaxUSD); err != nil {
			return err
		}
	}
	if err := config.CheckBudgetCount("--max-requests", int64(b.MaxRequests), 0, config.MaxBudgetRequests); err != nil {
		return err
	}
	return config.CheckBudgetCount("--max-minutes", int64(b.MaxMinutes), 0, config.MaxBudgetMinutes)
}

// privateDir checks that dir, in the shared temporary directory, is a
// directory (not a link) of this user with mode 0700: another local user
// who made it first would otherwise hold every candidate's layers (mode
// other than 0700), or fail every job with a bare permission error
// (owner). The error is PROCESS_ERROR delegate.candidates naming what is
// wrong and the remedy.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return fault.New(fault.ProcessError, "delegate.candidates", "the candidate directory "+dir+" is not a directory; remove it, or set TMPDIR to a private directory")
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Geteuid() {
		return fault.New(fault.ProcessError, "delegate.candidates", fmt.Sprintf(
			"the candidate directory %s belongs to uid %d, not to this user (uid %d): another user created it; have it removed, or set TMPDIR to a private directory", dir, uid, os.Geteuid()))
	}
	if fi.Mode().Perm() != 0o700 {
		return fault.New(fault.ProcessError, "delegate.candidates", fmt.Sprintf(
			"the candidate directory %s has mode %#o, not 0700: remove it (coagent8 makes it anew), or set TMPDIR to a private directory", dir, fi.Mode().Perm()))
	}
	return nil
}
