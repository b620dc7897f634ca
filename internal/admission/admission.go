package admission

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/quarantine"
)

// Reasons of the typed errors of this package. A refusal for the job's
// state is "admission." + the state's name (admission.rejected,
// admission.expired, admission.running, admission.admitted, …).
const (
	ReasonOtherWorkspace = "admission.other_workspace"
	ReasonUnacknowledged = "admission.taint_unacknowledged"
	ReasonNoCandidate    = "admission.no_candidate"
	ReasonDigest         = "admission.digest_mismatch"
	ReasonConflict       = "admission.conflict"
	ReasonChanged        = "admission.checkout_changed"
	ReasonInProgress     = "admission.in_progress"
	ReasonPath           = "admission.path"
	ReasonApply          = "admission.apply"
	ReasonDevice         = "admission.cross_device"
	// ReasonDirNotEmpty: a directory the candidate replaces with a file
	// holds a file the candidate does not delete.
	ReasonDirNotEmpty = "admission.dir_not_empty"
)

// AckTainted is the acknowledgement a tainted candidate needs.
const AckTainted = "tainted"

// ReasonUnknownAck is the refusal of an acknowledgement admission does not
// know (INVALID_INPUT): `--ack taint` would otherwise be accepted and the
// admission refused later as unacknowledged.
const ReasonUnknownAck = "admission.unknown_ack"

// AckValues are the acknowledgements admission knows.
var AckValues = []string{AckTainted}

// CheckAck refuses any acknowledgement other than [AckValues], naming the
// first unknown one and the accepted values.
func CheckAck(ack []string) error {
	for _, v := range ack {
		if !slices.Contains(AckValues, v) {
			return fault.New(fault.InvalidInput, ReasonUnknownAck, fmt.Sprintf("unknown ack value %s (accepted: %s)",
				fault.QuoteInput(v), strings.Join(AckValues, ", "))).With("ack", fault.QuoteInput(v))
		}
	}
	return nil
}

// Options configure an [Admitter].
type Options struct {
	// Jobs is the job store (required).
	Jobs *job.Store
	// Env is the environment git runs with (PATH, HOME).
	Env config.Env
	// StateDir holds the journals (<StateDir>/admissions, created 0700).
	StateDir string
	// Events receives the admission and rejection events (nil = discard).
	Events event.Sink

	// testOnlyStep, when set, runs after each numbered step of an admission
	// (see the step constants): the kill -9 test ends the process there.
	testOnlyStep func(step int)
}

// Steps at which testOnlyStep runs.
const (
	stepPlanned   = 1 // scratch apply done, nothing written
	stepStaged    = 2 // staging directory written, no journal
	stepCommitted = 3 // journal renamed into place
	stepOp        = 4 // after each roll-forward operation (4, 5, …)
	// stepRejectHeld: a rejection holds the pending lock, job not yet
	// rejected.
	stepRejectHeld = -1
	// stepChecked: the job was checked again under the pending lock; the
	// commit point comes next. Far below the others: the kill test's
	// child reads a negative step as "pause at its opposite".
	stepChecked = -100
	// stepQuarantineBusy: a quarantine found the lock held and waits.
	stepQuarantineBusy = -101
	// stepQuarantineHeld: a quarantine holds the lock, job not yet tainted.
	stepQuarantineHeld = -102
)

// Admitter admits and rejects candidates. It is safe for concurrent use;
// two admissions of one job are refused by the pending marker.
type Admitter struct {
	o   Options
	dir string
}

// New returns an Admitter after finishing or discarding any admission a
// killed process left (see the package doc).
func New(ctx context.Context, o Options) (*Admitter, error) {
	if o.Jobs == nil || o.StateDir == "" {
		return nil, errors.New("admission: Jobs and StateDir are required")
	}
	if o.Events == nil {
		o.Events = event.Discard{}
	}
	a := &Admitter{o: o, dir: filepath.Join(o.StateDir, "admissions")}
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		return nil, fmt.Errorf("admission directory: %w", err)
	}
	return a, a.recover(ctx)
}

// Request is one admission.
type Request struct {
	// Job is the job handle.
	Job string
	// Workspace is the checkout the user admits into (absolute); it must be
	// the job's workspace.
	Workspace string
	// Actor names who admits (e.g. "terminal:uid=1000"); recorded.
	Actor string
	// Ack lists the acknowledged reasons ([AckTainted]).
	Ack []string
}

// Result is a completed admission.
type Result struct {
	Job, Digest string
	// Paths are the workspace-relative paths written or removed.
	Paths []string
	// ThreeWay reports whether the checkout had moved and a three-way
	// apply was needed.
	ThreeWay bool
}

// Admit applies the job's candidate to its workspace, all or nothing.
// Errors: POLICY_DENIED admission.<state>, admission.other_workspace,
// admission.taint_unacknowledged; INVALID_INPUT admission.conflict (with
// Details "paths") or admission.checkout_changed; SESSION_BUSY
// admission.in_progress; INVALID_INPUT job.unknown. No failure writes to
// the checkout.
func (a *Admitter) Admit(ctx context.Context, r Request) (Result, error) {
	j, err := a.admissible(ctx, r)
	if err != nil {
		a.refused(j, r, err)
		return Result{}, err
	}
	res, err := a.apply(ctx, j, r)
	if err != nil {
		a.refused(j, r, err)
		return Result{}, err
	}
	return res, nil
}

// admissible checks the acknowledgements, loads the job and checks, in
// this order, expiry, workspace, state, that there is a candidate, taint
// and digest.
func (a *Admitter) admissible(ctx context.Context, r Request) (job.Job, error) {
	if err := CheckAck(r.Ack); err != nil {
		return job.Job{}, err
	}
	j, err := a.o.Jobs.Get(ctx, r.Job)
	if err != nil {
		return j, err
	}
	if (j.State == job.Succeeded || j.State == job.Tainted) && !time.Now().Before(j.Expires) {
		a.o.Jobs.Expire(ctx, j.ID)
		j.State, j.Reason = job.Expired, job.ReasonExpired
	}
	if err := sameWorkspace(j, r.Workspace); err != nil {
		return j, err
	}
	if j.State != job.Succeeded && j.State != job.Tainted {
		return j, stateRefusal(j, "admission."+j.State.String(), fmt.Sprintf("Job %s is %s and cannot be admitted.", j.ID, j.State))
	}
	// No candidate before the taint: a job that failed with nothing and
	// was then quarantined has nothing to admit, and asking for the taint
	// acknowledged first sends the user after the wrong cause.
	if j.Candidate == nil || len(j.Candidate.Patch) == 0 {
		return j, fault.New(fault.InvalidInput, ReasonNoCandidate, "The job's candidate is empty: there is nothing to admit.")
	}
	if j.State == job.Tainted && !slices.Contains(r.Ack, AckTainted) {
		return j, stateRefusal(j, ReasonUnacknowledged, fmt.Sprintf("Job %s is tainted (%s): admitting it needs the taint acknowledged.", j.ID, j.Reason))
	}
	if quarantine.Digest(j.Candidate.Patch) != j.Candidate.Digest {
		return j, fault.New(fault.SandboxUnavailable, ReasonDigest, "The stored candidate does not match the digest recorded when it was quarantined.")
	}
	return j, nil
}

func stateRefusal(j job.Job, reason, msg string) error {
	return fault.New(fault.PolicyDenied, reason, msg).With("state", j.State.String()).With("job_reason", j.Reason)
}

// sameWorkspace refuses a workspace other than the job's (compared after
// resolving symbolic links).
func sameWorkspace(j job.Job, ws string) error {
	deny := fault.New(fault.PolicyDenied, ReasonOtherWorkspace, "The job belongs to another workspace: run this at the top of the job's checkout, or name it (--workspace on the terminal, workspace_path over MCP); `coagent8 jobs JOB` shows the job's workspace.")
	if !filepath.IsAbs(ws) {
		return deny
	}
	a, err1 := filepath.EvalSymlinks(ws)
	b, err2 := filepath.EvalSymlinks(j.Workspace)
	if err1 != nil || err2 != nil || a != b {
		return deny
	}
	return nil
}

// Reject discards job id's candidate; the job must belong to workspace.
func (a *Admitter) Reject(ctx context.Context, id, workspace, actor string) error {
	j, err := a.o.Jobs.Get(ctx, id)
	if err == nil {
		err = sameWorkspace(j, workspace)
	}
	if err == nil {
		var release func()
		if release, err = a.holdPending(id); err == nil {
			defer release()
			a.step(stepRejectHeld)
			err = a.o.Jobs.Reject(ctx, id, actor)
		}
	}
	if err != nil {
		return err
	}
	a.o.Events.Record(event.Event{Type: event.TypeDecision, Reason: "admission.rejected", IDs: map[string]string{"job": id, "actor": actor}})
	return nil
}

// holdPending takes job id's pending lock for a rejection: an admission
// that passed its checks before the rejection could otherwise re-check
// the job under its own lock, commit, and write the checkout of a job the
// user had just rejected. While held, an admission's claim sees the
// marker (SESSION_BUSY admission.in_progress). An existing marker (an
// admission in progress, or one a dead process left for recovery) is
// SESSION_BUSY too. Without locking (other platforms, where admission is
// unsupported) only the marker is checked.
func (a *Admitter) holdPending(id string) (func(), error) {
	p := a.pendingPath(id)
	busy := fault.New(fault.SessionBusy, ReasonInProgress, "An admission of this job is in progress.").WithRetry()
	if _, err := os.Stat(p); err == nil {
		return nil, busy
	}
	f, ok, err := lockPending(p)
	switch {
	case err != nil && errors.Is(err, errors.ErrUnsupported):
		return func() {}, nil
	case err != nil:
		return nil, applyError(err)
	case !ok:
		return nil, busy
	}
	return func() { os.Remove(p); f.Close() }, nil
}

func (a *Admitter) refused(j job.Job, r Request, err error) {
	fe := fault.From(err)
	a.o.Events.Record(event.Event{Type: event.TypeRefusal, Code: string(fe.Code), Reason: fe.Reason,
		IDs: map[string]string{"job": r.Job, "actor": r.Actor}})
}
