package admission

import (
	"context"
	"time"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
)

// quarantineWait bounds how long a quarantine waits for an admission of
// the same job in progress (an admission holds the lock for its staging,
// fsyncs and roll-forward: seconds).
const quarantineWait = 30 * time.Second

// pendingPoll is the period at which a waiting quarantine retries the lock.
const pendingPoll = 20 * time.Millisecond

// Quarantine is [job.Store.Quarantine] under job id's pending lock, the
// lock [Admitter.Reject] takes: a quarantine landing between an
// admission's last check of the job and its commit point otherwise
// tainted the job, and the admission then wrote the candidate into the
// checkout and marked the job admitted — the compromise response lost.
// An admission in progress is waited for (up to 30 s); the quarantine
// then finds the job admitted (INVALID_INPUT job.state, after revoking its
// grants). If the admission is still in progress after the wait, the
// job's grants are revoked all the same and the error is SESSION_BUSY
// admission.in_progress (retryable, recorded as a quarantine.failed
// refusal): the job is not tainted yet. Other errors are those of
// [job.Store.Quarantine].
func (a *Admitter) Quarantine(ctx context.Context, id string, c job.Containment) (job.Evidence, error) {
	j, err := a.o.Jobs.Get(ctx, id)
	if err != nil { // unknown: no lock named after it; Quarantine refuses and records it
		return a.o.Jobs.Quarantine(ctx, id, c)
	}
	release, err := a.waitPending(ctx, j.ID, quarantineWait)
	if err != nil {
		return job.Evidence{}, a.quarantineBusy(ctx, j.ID, c, err)
	}
	defer release()
	a.step(stepQuarantineHeld)
	return a.o.Jobs.Quarantine(ctx, j.ID, c)
}

// waitPending takes job id's pending lock, retrying while an admission
// holds it, until wait has passed or ctx ends.
func (a *Admitter) waitPending(ctx context.Context, id string, wait time.Duration) (func(), error) {
	deadline := time.Now().Add(wait)
	for first := true; ; first = false {
		release, err := a.holdPending(id)
		if !fault.HasCode(err, fault.SessionBusy) || !time.Now().Before(deadline) {
			return release, err
		}
		if first {
			a.step(stepQuarantineBusy)
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(pendingPoll):
		}
	}
}

// quarantineBusy answers a quarantine that could not take the lock: the
// grants are revoked anyway (the network is the first thing to cut), and
// the refusal is recorded.
func (a *Admitter) quarantineBusy(ctx context.Context, id string, c job.Containment, cause error) error {
	err := cause
	if fault.HasCode(cause, fault.SessionBusy) && c.Revoker != nil {
		msg := "An admission of this job is in progress: its grants were revoked, but the job was not tainted; run the quarantine again when the admission has ended."
		if _, rerr := c.Revoker.RevokeJob(ctx, id); rerr != nil {
			msg = "An admission of this job is in progress, and its grants could not be revoked; run the quarantine again."
		}
		err = fault.New(fault.SessionBusy, ReasonInProgress, msg).WithRetry()
	}
	if c.Events != nil {
		fe := fault.From(err)
		c.Events.Record(event.Event{Type: event.TypeRefusal, Code: string(fe.Code), Reason: job.ReasonQuarantineFailed,
			Detail: fe.Reason, IDs: map[string]string{"job": id, "trigger": c.Trigger, "actor": c.Actor}})
	}
	return err
}
