package governor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/crash"
	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/gitrepo"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// live are the jobs this process runs: their cancel functions and done
// channels (cancel; wait).
type live struct {
	mu   sync.Mutex
	jobs map[string]*running
}

type running struct {
	grant     string
	cancel    context.CancelFunc
	done      chan struct{}
	cancelled bool
	// timedOut is set, by the job's goroutine before it ends the job,
	// when the job's time limit (its budget's max minutes) had passed.
	timedOut bool
	activity *activity // the agent's recent activity lines (delegate_activity.go)
	// stopChecks cancels the candidate's checks while they run (set
	// under live.mu by finishJob; CancelJob calls it).
	stopChecks context.CancelFunc
	// seed is the candidate's seeded upper layer (a base commit other
	// than HEAD), nil otherwise.
	seed *quarantine.Seed
}

func (l *live) add(id string, r *running) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.jobs == nil {
		l.jobs = map[string]*running{}
	}
	l.jobs[id] = r
}

func (l *live) get(id string) *running {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.jobs[id]
}

// deps builds the delegate dependencies on the first approved job and
// keeps them; a failure is returned and retried by the next job (the
// user may fix the configuration meanwhile).
func (g *Governor) deps(ctx context.Context) (DelegateDeps, error) {
	g.depsMu.Lock()
	defer g.depsMu.Unlock()
	if g.depsOK {
		return g.delegateDeps, nil
	}
	if g.delegation == nil {
		return DelegateDeps{}, fault.New(fault.Unsupported, ReasonUnavailable, "delegate jobs are not available in this coagent8 process")
	}
	d, err := g.delegation(ctx)
	if err != nil {
		return DelegateDeps{}, err
	}
	g.delegateDeps, g.depsOK = d, true
	removeLeftovers(ctx, d)
	return d, nil
}

// removeLeftovers removes the candidate directories of deps.CandidateDir
// whose job in deps.Jobs has ended and whose supervisor is gone: those a
// killed coagent8 left behind (the job store failed their jobs
// job.supervisor_gone when it opened). A job whose supervisor lives is
// that process's to finish, ended or not: a job quarantined while it
// runs is tainted before its candidate is read, its agent possibly still
// writing the layer. A name no job of this store has may be another state
// directory's job (the candidates directory is per user, not per state
// directory). All those are kept. Best effort: a failure leaves the
// directory for the next process.
func removeLeftovers(ctx context.Context, deps DelegateDeps) {
	entries, err := os.ReadDir(deps.CandidateDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "job_") {
			continue
		}
		if j, err := deps.Jobs.Get(ctx, e.Name()); err == nil && j.State != job.Running && j.SupervisorGone() {
			_ = os.RemoveAll(filepath.Join(deps.CandidateDir, e.Name()))
		}
	}
}

// startJob creates the job row and its grant and starts the agent.
func (g *Governor) startJob(ctx context.Context, t DelegateTask, q JobQuestion, base baseRef) (JobView, error) {
	// The question may have been open for minutes: the base is placed
	// against the checkout as it is now, before anything is made.
	base, err := g.restateBase(ctx, q.Workspace, base)
	if err != nil {
		return JobView{}, err
	}
	deps, err := g.deps(ctx)
	if err != nil {
		return JobView{}, err
	}
	rt, err := deps.Runtime(ctx, q.Decision.Backend)
	if err != nil {
		return JobView{}, err
	}
	d := q.Decision
	stored, snap, err := g.jobBase(ctx, deps, q.Workspace, base)
	if err != nil {
		return JobView{}, err
	}
	j, err := deps.Jobs.Create(ctx, job.Spec{Workspace: q.Workspace, Base: stored, Backend: d.Backend, Model: d.Model, Budget: q.Budget})
	if err != nil {
		_ = os.RemoveAll(snap)
		return JobView{}, err
	}
	if snap != "" {
		// The uncommitted base's objects live with the job: the candidate
		// is built, and admitted three-way, against them.
		if err := errors.Join(os.MkdirAll(filepath.Join(deps.WorkDir, j.ID), 0o700), os.Rename(snap, filepath.Join(deps.WorkDir, j.ID, "base"))); err != nil {
			_ = os.RemoveAll(snap)
			return JobView{}, g.abort(ctx, deps, j.ID, "delegate.workdir", fault.Wrap(fault.ProcessError, "delegate.workdir", "the job directory cannot be made", err))
		}
	}
	limit := time.Duration(q.Budget.MaxMinutes) * time.Minute
	gr, phantom, err := deps.Gate.Grant(ctx, gate.Spec{Provider: rt.Provider(), Model: d.Model, Job: j.ID, TTL: limit + time.Minute,
		Secret: deps.Secret, MaxRequests: int64(q.Budget.MaxRequests), MaxTokens: jobTokens, MaxSpend: gate.USD(q.Budget.MaxUSD),
		Price: gatePrice(d.Price), OutputCeiling: jobOutputCeiling})
	if err != nil {
		return JobView{}, g.abort(ctx, deps, j.ID, "delegate.grant", err)
	}
	dir := filepath.Join(deps.CandidateDir, j.ID)
	if err := errors.Join(os.MkdirAll(filepath.Join(deps.WorkDir, j.ID), 0o700), os.MkdirAll(dir, 0o700)); err != nil {
		_ = deps.Gate.Revoke(ctx, gr.ID)
		return JobView{}, g.abort(ctx, deps, j.ID, "delegate.workdir", fault.Wrap(fault.ProcessError, "delegate.workdir", "the job directory cannot be made", err))
	}
	seed, err := g.seedCandidate(ctx, q.Workspace, base, dir)
	if err != nil {
		_ = deps.Gate.Revoke(ctx, gr.ID)
		_ = os.RemoveAll(dir)
		return JobView{}, g.abort(ctx, deps, j.ID, fault.From(err).Reason, err)
	}
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	r := &running{grant: gr.ID, cancel: cancel, done: make(chan struct{}), seed: seed,
		activity: newActivityFor(rt, filepath.Join(deps.WorkDir, j.ID, ActivityFile))}
	g.live.add(j.ID, r)
	out, errs := &tail{max: 4 << 20}, &tail{max: 64 << 10}
	dj := delegation.Job{Runtime: rt, Model: d.Model, Prompt: t.Task, Workspace: q.Workspace, CandidateDir: dir, Seeded: seed != nil,
		Phantom: phantom, Gate: deps.Gate, Grant: gr.ID, Stdout: io.MultiWriter(out, r.activity), Stderr: errs}
	g.supervise(ctx, deps, j, r, func() {
		res, err := g.runContained(jctx, deps, j, r, dj)
		r.timedOut = errors.Is(jctx.Err(), context.DeadlineExceeded)
		// The agent's diagnostics, bounded, for the user (untrusted bytes;
		// never rendered to the caller), diagnostic-redacted as every
		// stored log is: a command's output in the transcript may
		// carry a credential the agent read.
		_ = os.WriteFile(filepath.Join(deps.WorkDir, j.ID, "agent.stderr"), g.diag.Bytes(errs.bytes()), 0o600)
		_ = os.WriteFile(filepath.Join(deps.WorkDir, j.ID, "agent.stdout"), g.diag.Bytes(out.bytes()), 0o600)
		g.finishJob(context.WithoutCancel(ctx), deps, j, r, res, err, finalMessage(rt, res, out))
		_ = deps.Gate.Revoke(context.WithoutCancel(ctx), gr.ID) // the grant ends with its job
	})
	if t.Wait {
		select {
		case <-r.done:
		case <-ctx.Done():
		}
	}
	return g.JobStatus(context.WithoutCancel(ctx), q.Workspace, j.ID)
}

// supervise runs body, job j's run to its end, on a goroutine of its own;
// r.done closes when it returned and r.cancel is called. A panic in body
// ends job j, not the process (which runs other jobs and calls): its tree
// is cancelled, the job recorded failed with reason internal.panic
// (crash.Reason; PROCESS_ERROR in the log with the stack) and its grant
// revoked, all before r.done closes, so a waiter reads the ending.
func (g *Governor) supervise(ctx context.Context, deps DelegateDeps, j job.Job, r *running, body func()) {
	go func() {
		defer close(r.done)
		defer r.cancel()
		defer g.guard.Recover("delegate job "+j.ID, func(error) {
			r.cancel()
			ctx := context.WithoutCancel(ctx)
			_ = deps.Jobs.Transition(ctx, j.ID, []job.State{job.Running}, job.Failed, crash.Reason)
			_ = deps.Gate.Revoke(ctx, r.grant)
		})
		body()
	}()
}

// abort fails a job that could not start and returns err.
func (g *Governor) abort(ctx context.Context, deps DelegateDeps, id, reason string, err error) error {
	_ = deps.Jobs.Transition(context.WithoutCancel(ctx), id, []job.State{job.Running}, job.Failed, reason)
	return err
}

// finishJob quarantines the candidate and ends the job row. The
// candidate directory is removed however the job ends: an admissible
// candidate is the patch stored with the job, and nothing reads the
// directory after it (a failed or cancelled job's stayed for good, up to
// the sandbox's 8 GiB disk bound each).
func (g *Governor) finishJob(ctx context.Context, deps DelegateDeps, j job.Job, r *running, res delegation.Result, runErr error, message []byte) {
	writeReceipt(filepath.Join(deps.WorkDir, j.ID, "receipt.json"), res)
	g.live.mu.Lock()
	cancelled := r.cancelled
	g.live.mu.Unlock()
	cand := filepath.Join(deps.CandidateDir, j.ID)
	defer os.RemoveAll(cand)
	if res.Tainted {
		// A containment event: the one compromise action (before any
		// other ending, so a contained job never ends merely failed).
		g.finishContained(ctx, deps, j, res, runErr, message, filepath.Join(cand, "upper"), r.seed)
		return
	}
	if state, reason, ended := ending(res, runErr, cancelled, r.timedOut); ended {
		_ = deps.Jobs.Transition(ctx, j.ID, []job.State{job.Running}, state, reason)
		return
	}
	c, err := g.quarantine(ctx, j, filepath.Join(cand, "upper"), res, r.seed)
	if err != nil {
		_ = deps.Jobs.Transition(ctx, j.ID, []job.State{job.Running}, job.Failed, fault.From(err).Reason)
		return
	}
	// The user's checks run on the candidate before it is attached, so
	// the stored result carries their real outcome (issue 16 scope 4).
	v, cancelled := g.runChecks(ctx, j, r, filepath.Join(cand, "upper"))
	if cancelled {
		_ = deps.Jobs.Transition(ctx, j.ID, []job.State{job.Running}, job.Cancelled, "delegate.cancelled")
		return
	}
	_, _ = deps.Jobs.Attach(ctx, j.ID, job.Candidate{Patch: c.Patch, Digest: c.Digest, Findings: c.Findings, Message: message, Verification: v})
}

// ending is how a job whose run produced no candidate to quarantine
// ended: its state and reason; ended is false when the agent succeeded.
// Its time limit is named as the cause whenever the limit had passed,
// since whatever failed after it (the killed tree, a session cut short)
// is its consequence.
func ending(res delegation.Result, runErr error, cancelled, timedOut bool) (state job.State, reason string, ended bool) {
	switch {
	case cancelled:
		return job.Cancelled, "delegate.cancelled", true
	case timedOut:
		return job.Failed, ReasonTimeLimit, true
	case runErr != nil:
		return job.Failed, fault.From(runErr).Reason, true
	case !res.Receipt.Exit.Success() && belowRequest(res.Grant.LastRefusal):
		// The gate refused a request that alone reserves more than the
		// whole budget: every retry is refused the same, so the budget,
		// not the agent, ended the job (newcomer report: $1 jobs ended
		// only "delegate.agent_exited").
		return job.Failed, ReasonBudgetBelowRequest, true
	case !res.Receipt.Exit.Success() && (exhausted(res.Grant) || usedUp(res.Grant.LastRefusal)):
		// The gate refused the agent's next request for its budget and
		// the agent gave up: the job ended by its budget (the receipt has
		// the counters).
		return job.Failed, ReasonBudgetExhausted, true
	case !res.Receipt.Exit.Success():
		return job.Failed, AgentEndedReason(res.Receipt.Exit.Class), true
	}
	return 0, "", false
}

// belowRequest reports whether the gate's refusal reason says one request
// reserves more than the grant's whole budget.
func belowRequest(reason string) bool {
	return reason == gate.ReasonRequestSpend || reason == gate.ReasonRequestTokens
}

// usedUp reports whether the gate's refusal reason says the grant's
// budget is used up. budget.reserved is not: it passes once requests in
// flight settle, so an agent that gave up after it ended on its own.
func usedUp(reason string) bool {
	switch reason {
	case gate.ReasonBudgetRequests, gate.ReasonBudgetTokens, gate.ReasonBudgetSpend:
		return true
	}
	return false
}

// AgentEndedReason is the reason of a job whose agent ended unsuccessfully
// with exit class c ("delegate.agent_exited", "delegate.agent_signalled", ...).
func AgentEndedReason(c sandbox.ExitClass) string { return "delegate.agent_" + c.String() }

// runChecks runs the checks on job j's candidate, cancellable by
// CancelJob; cancelled reports that the job was cancelled meanwhile.
func (g *Governor) runChecks(ctx context.Context, j job.Job, r *running, upper string) (*job.Verification, bool) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	g.live.mu.Lock()
	r.stopChecks = stop
	cancelled := r.cancelled
	g.live.mu.Unlock()
	if cancelled {
		return nil, true
	}
	v := g.verifyCandidate(ctx, j, upper)
	g.live.mu.Lock()
	defer g.live.mu.Unlock()
	r.stopChecks = nil
	return v, r.cancelled
}

// quarantine builds job j's candidate patch from the run's changes in
// upper: against the job's base, the seed's own content left out (seed is
// nil for a base HEAD or uncommitted).
func (g *Governor) quarantine(ctx context.Context, j job.Job, upper string, res delegation.Result, seed *quarantine.Seed) (*quarantine.Candidate, error) {
	repo, err := gitrepo.Open(ctx, g.env, j.Workspace)
	if err != nil {
		return nil, err
	}
	changes := res.Changes
	if seed != nil {
		if changes, err = seed.Changes(upper, changes); err != nil {
			return nil, err
		}
	}
	rev, objects := candidateBase(g.delegateDeps.WorkDir, j.ID, j.Base)
	return quarantine.Build(ctx, quarantine.Input{Repo: repo, Base: rev, Objects: objects, Upper: upper, Changes: changes,
		ScratchDir: filepath.Dir(upper)})
}

// exhausted reports whether grant gr has no room for another request: a
// count limit reached, or less spend left than one request's output
// reservation at the grant's output price.
func exhausted(gr gate.Grant) bool {
	l, u := gr.Limits, gr.Used
	if l == (gate.Counters{}) {
		return false // never read back
	}
	reserve := gate.USD(float64(gr.Ceiling) * gr.Price.OutputPerMTok / 1e6)
	return u.Requests >= l.Requests || u.Tokens >= l.Tokens || l.Spend-u.Spend < reserve
}

// Receipt is a job's stored receipt: the sandbox's containment receipt
// and the grant's final counters.
type Receipt struct {
	Sandbox *sandbox.Receipt `json:"sandbox,omitempty"`
	Grant   *gate.Grant      `json:"grant,omitempty"`
}

func writeReceipt(path string, res delegation.Result) {
	r := Receipt{}
	if res.Receipt.Profile != "" {
		r.Sandbox = &res.Receipt
	}
	if res.Grant.ID != "" {
		r.Grant = &res.Grant
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	_ = os.WriteFile(path, b, 0o600)
}

func readReceipt(path string) *Receipt {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var r Receipt
	if json.Unmarshal(b, &r) != nil {
		return nil
	}
	return &r
}

// CancelJob ends job id of workspace ws if this process runs it: its tree
// is ended, its grant revoked, and the job recorded cancelled. It waits
// (bounded) for the job to settle and returns it. A job this process does
// not run is returned as it is, or refused INVALID_INPUT job.state when
// it is running elsewhere.
func (g *Governor) CancelJob(ctx context.Context, ws, id string) (JobView, error) {
	v, err := g.JobStatus(ctx, ws, id)
	if err != nil {
		return v, err
	}
	r := g.live.get(id)
	if r == nil {
		if v.State == job.Running.String() {
			return v, fault.New(fault.InvalidInput, job.ReasonState, "job "+id+" is run by another coagent8 process; cancel it there")
		}
		return v, nil
	}
	g.live.mu.Lock()
	r.cancelled = true
	if r.stopChecks != nil {
		r.stopChecks()
	}
	g.live.mu.Unlock()
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
	}
	return g.JobStatus(ctx, ws, id)
}

// WaitJob blocks until job id (run by this process) ends or ctx is done.
func (g *Governor) WaitJob(ctx context.Context, id string) {
	if r := g.live.get(id); r != nil {
		select {
		case <-r.done:
		case <-ctx.Done():
		}
	}
}

// tail keeps the last max bytes of the agent's stream-json output, from
// which the final message is read.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tail) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.b...)
}

// final returns the "result" text of the last result event (Claude Code
// stream-json), or nil.
func (t *tail) final() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(t.b, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var ev struct {
			Type   string `json:"type"`
			Result string `json:"result"`
		}
		if json.Unmarshal(lines[i], &ev) == nil && ev.Type == "result" {
			return []byte(ev.Result)
		}
	}
	return nil
}
