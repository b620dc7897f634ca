package governor

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/quarantine"
)

// Containment during a job (issue 16 scope 7, issue 15 scope 6). The
// gate answers a containment signal (a phantom on an unadmitted route, a
// credential in a request, another job's phantom) by revoking the job's
// grants itself. The job then goes through the one compromise action,
// [job.Store.Quarantine] — the function `coagent8 quarantine JOB` calls —
// with the job's tree ended through the sandbox: every grant revoked,
// tree ended, candidate and artifacts tainted, bounded secret-free
// evidence, the security event, and admission only with the taint
// acknowledged.

// TriggerGateRevoked is the quarantine trigger of a containment event:
// the gate revoked the job's grant during the job (its compromise event
// names the signal).
const TriggerGateRevoked = "gate.revoked"

// actorContainment is the quarantine actor of the automatic path.
const actorContainment = "coagent8:containment"

// containPoll is how often a running job's grant is read back for a
// revocation coagent8 did not make. Reading it is a lookup in the
// gate's store; a tenth of a second bounds how long a contained agent
// keeps running without network.
const containPoll = 100 * time.Millisecond

// endWait bounds how long ending a contained job's tree waits for the
// sandbox to report it gone (its own kill deadline is 2 s).
const endWait = 30 * time.Second

// ownRevokes is the job's gate as its runner sees it: it marks every
// revocation the runner makes (cancellation, a refused startup report),
// so a revocation of the gate's own is told apart from ours.
type ownRevokes struct {
	delegation.Gate
	ours atomic.Bool
}

func (o *ownRevokes) Revoke(ctx context.Context, id string) error {
	o.ours.Store(true) // before the grant's state changes
	return o.Gate.Revoke(ctx, id)
}

// runContained runs dj as deps.Runner.Run does, watching its grant: when
// the gate revokes it during the run, the job is quarantined at once and
// its tree ended (the result is then Tainted). After the run, a
// revocation the watch did not see yet is answered by finishJob.
func (g *Governor) runContained(ctx context.Context, deps DelegateDeps, j job.Job, r *running, dj delegation.Job) (delegation.Result, error) {
	own := &ownRevokes{Gate: dj.Gate}
	dj.Gate = own
	rctx, end := context.WithCancel(ctx)
	defer end()
	ran := make(chan struct{})
	var res delegation.Result
	var err error
	var quarantined atomic.Bool
	var watchErr error // a panic in the watch (set before wg.Done)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Without its watch the job runs uncontained: a panic in it ends
		// the run, and the job fails with it.
		defer g.guard.Recover("delegate job "+j.ID+" containment watch", func(e error) { watchErr = e; end() })
		if g.watchGrant(rctx, deps, r.grant, own, ran) {
			quarantined.Store(true)
			g.quarantineContained(context.WithoutCancel(ctx), deps, j, func(context.Context, job.Job) error {
				end() // the sandbox kills the tree and verifies it empty
				return waitTree(ran, &res)
			})
		}
	}()
	res, err = deps.Runner.Run(rctx, dj)
	close(ran)
	end()
	wg.Wait()
	if watchErr != nil && err == nil {
		err = watchErr
	}
	if quarantined.Load() {
		res.Tainted, res.TaintReason = true, "the gate revoked the job's grant during the job (containment event); the job was quarantined"
	}
	return res, err
}

// watchGrant reports whether grant id was revoked by someone other than
// the runner while ctx lives and the run has not ended.
func (g *Governor) watchGrant(ctx context.Context, deps DelegateDeps, id string, own *ownRevokes, ran <-chan struct{}) bool {
	t := time.NewTicker(containPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-ran:
			return false
		case <-t.C:
		}
		gr, err := deps.Gate.Inspect(ctx, id)
		if err == nil && gr.State == gate.Revoked && !own.ours.Load() && ctx.Err() == nil {
			return true
		}
	}
}

// waitTree waits (bounded) for the run to end and reports whether the
// sandbox verified the tree gone.
func waitTree(ran <-chan struct{}, res *delegation.Result) error {
	select {
	case <-ran:
	case <-time.After(endWait):
		return fault.New(fault.ProcessError, "delegate.tree", "the job's tree did not end in time")
	}
	if !res.Receipt.TreeEmpty {
		return fault.New(fault.ProcessError, "delegate.tree", "the sandbox did not verify the job's tree gone")
	}
	return nil
}

// quarantineContained is the one compromise action on job j (job.Store.Quarantine,
// as `coagent8 quarantine`), triggered by a containment event; end ends
// its tree when it is running. A failure is in the refusal event
// Quarantine records; the job then ends tainted by finishJob all the
// same (fail closed).
func (g *Governor) quarantineContained(ctx context.Context, deps DelegateDeps, j job.Job, end func(context.Context, job.Job) error) {
	_, _ = deps.Jobs.Quarantine(ctx, j.ID, job.Containment{Revoker: revoker{deps.Gate}, End: end,
		Trigger: TriggerGateRevoked, Actor: actorContainment, Events: g.events})
}

// revoker revokes every grant of a job through the gate (*gate.Gate's
// RevokeJob); a gate without it fails the quarantine, never silently.
type revoker struct{ g DelegateGate }

func (r revoker) RevokeJob(ctx context.Context, id string) ([]string, error) {
	if jr, ok := r.g.(job.Revoker); ok {
		return jr.RevokeJob(ctx, id)
	}
	return nil, fault.New(fault.Unsupported, job.ReasonRevoke, "this gate cannot revoke a job's grants")
}

// finishContained ends a job whose grant the gate revoked: quarantined
// (now, when the watch did not get to it: the tree already ended with
// the run), then the candidate, if the run left one, stored tainted and
// unchecked — the checks would execute the contained agent's code.
func (g *Governor) finishContained(ctx context.Context, deps DelegateDeps, j job.Job, res delegation.Result, runErr error, message []byte, upper string, seed *quarantine.Seed) {
	if cur, err := deps.Jobs.Get(ctx, j.ID); err == nil && cur.State == job.Running {
		g.quarantineContained(ctx, deps, j, func(context.Context, job.Job) error {
			return waitTree(closed, &res)
		})
	}
	if runErr != nil {
		_ = deps.Jobs.Transition(ctx, j.ID, []job.State{job.Running}, job.Tainted, TriggerGateRevoked)
		return
	}
	c, err := g.quarantine(ctx, j, upper, res, seed)
	if err != nil {
		_ = deps.Jobs.Transition(ctx, j.ID, []job.State{job.Running}, job.Tainted, TriggerGateRevoked)
		return
	}
	_, _ = deps.Jobs.Attach(ctx, j.ID, job.Candidate{Patch: c.Patch, Digest: c.Digest, Findings: c.Findings, Message: message,
		Taint: TriggerGateRevoked, Verification: &job.Verification{Note: NoteQuarantined}})
}

// closed is a channel that is already closed (a run that has ended).
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()
