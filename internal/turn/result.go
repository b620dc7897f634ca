package turn

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
)

// completed builds the success Outcome: answer redacted, then bounded.
func (r *Runner) completed(ctx context.Context, req Request, backend string, res adapter.Result, lease Lease, start time.Time) Outcome {
	text, truncated := r.bound(res)
	o := Outcome{
		SchemaVersion: 1, Provider: &backend, Status: Completed, Output: text, Truncated: truncated,
		Activity: Activity{ToolCount: res.ToolCount, DurationMs: time.Since(start).Milliseconds()},
		Verdict:  VerdictNotApplicable, Model: r.answer.String(res.Model), ModelRequested: r.answer.String(req.Model),
		ModelUsed: r.answer.String(res.Model), Turn: lease.Turn(), Verification: r.diag.String(res.Verified),
	}
	o.Containment, o.ContainmentReason = containment(res.Containment, launcherReason(req))
	o.ContainmentReason = r.warning(o.ContainmentReason) // may name host paths (a sandbox refusal)
	if o.Containment == adapter.ContainmentKernel && res.SessionID != "" && !sessionKept(req.Launcher) {
		// The CLI's session lived in the sandbox's job-scoped config
		// directory, removed with the job, and the launcher kept no copy
		// of it (no session, or the transcript was not kept): nothing to
		// resume.
		res.SessionID = ""
		res.Warnings = append(res.Warnings, "This turn ran in the kernel sandbox and its CLI session was not kept; it cannot be continued (the history is kept).")
	}
	for _, w := range res.Warnings {
		o.Warnings = append(o.Warnings, r.warning(w))
	}
	// An archive failure is a warning, never a failed turn (AUD-P1-3); the
	// session then cannot be trusted to continue.
	w := lease.End(context.WithoutCancel(ctx), End{NativeID: res.SessionID, Model: res.Model, Status: Completed, Output: text})
	if w != "" {
		o.Warnings = append(o.Warnings, r.warning(w))
	}
	if h := lease.Handle(); h != "" {
		o.SessionHandle = &h
		o.ContinuationAvailable = res.SessionID != "" && w == ""
		o.HistoryAvailable = w == ""
	}
	return o
}

// sessionKept reports whether l (the kernel read profile's launcher)
// kept the turn's CLI session for a later --resume.
func sessionKept(l adapter.Launcher) bool {
	k, ok := l.(interface{ SessionKept() bool })
	return ok && k.SessionKept()
}

// launcherReason is the containment reason of req: the launcher's own
// when it chose where the turn ran once the session was known (a reused
// session living on the host), else the governed path's.
func launcherReason(req Request) string {
	if l, ok := req.Launcher.(interface{ ContainmentReason() string }); ok && l.ContainmentReason() != "" {
		return l.ContainmentReason()
	}
	return req.ContainmentReason
}

// containment is the reported containment of a completed turn: the
// backend's (a backend without a launcher seam reports none: profile).
func containment(got, reason string) (string, string) {
	if got == "" {
		got = adapter.ContainmentProfile
	}
	if reason == "" && got == adapter.ContainmentProfile {
		reason = "the CLI's verified read-only profile on the host"
	}
	return got, reason
}

// bound redacts the answer and cuts it to MaxOutputBytes. An
// answer the backend already cut ([adapter.Result.Truncated]) is redacted
// as the prefix it is: through the streaming redactor without its end, so
// what was held back — a credential the cut may have split, whose head
// alone no rule would recognise — is dropped, never shown (issue 19 item 6).
func (r *Runner) bound(res adapter.Result) (string, bool) {
	if !res.Truncated {
		return r.answer.Bound(res.Text, MaxOutputBytes)
	}
	var b strings.Builder
	w := r.answer.Writer(&b)
	_, _ = io.WriteString(w, res.Text) // a strings.Builder never fails
	text, _ := r.answer.Bound(b.String(), MaxOutputBytes)
	return text, true
}

func (r *Runner) warning(w string) string {
	s, _ := r.diag.Bound(w, MaxWarningBytes)
	return s
}

// failed builds the failure Outcome and records refusals as events.
func (r *Runner) failed(req Request, err error, start time.Time) Outcome {
	o := r.outcome(req, err, start)
	var done recorded
	if fe := fault.From(err); refusal(fe.Code) && !errors.As(err, &done) {
		r.record(event.Event{Type: event.TypeRefusal, Code: string(fe.Code), Reason: fe.Reason, Backend: req.Backend, Model: req.Model})
	}
	return o
}

// recorded is a refusal whose event was recorded where it was raised,
// with its detail (workspace_changed): [Runner.failed] records no second
// event of it (R-046: one refusal, one event).
type recorded struct{ error }

func (r recorded) Unwrap() error { return r.error }

// refusal reports whether a failure with code is a refusal, each one a
// security event, rather than a turn that broke. AUTH_REQUIRED is
// one: the backend's CLI refused the turn for its login (Codex's
// codex.not_signed_in before the thread, Claude Code's
// authentication_failed). The governor records the same refusal itself
// only when it probes the login before asking; an allowed model is not
// asked about, so its refusal is raised here, in the run.
func refusal(code fault.Code) bool {
	switch code {
	case fault.SandboxUnavailable, fault.PolicyDenied, fault.NestedTurn, fault.AuthRequired:
		return true
	}
	return false
}

// IsRefusal reports whether err is a refusal in [refusal]'s sense (by its
// [fault.From] code; nil is none), for a caller that raises one before a
// run: the governor's model resolution, whose probe verifies the CLI's
// profile report.
func IsRefusal(err error) bool { return err != nil && refusal(fault.From(err).Code) }

// outcome builds the failure Outcome of err without recording it.
func (r *Runner) outcome(req Request, err error, start time.Time) Outcome {
	fe := fault.From(err)
	msg, _ := r.diag.Bound(fe.Message, 4096)
	o := Outcome{
		SchemaVersion: 1, Status: statusOf(err), Verdict: VerdictNotApplicable, ModelRequested: r.answer.String(req.Model),
		Activity: Activity{DurationMs: time.Since(start).Milliseconds()}, Reason: fe.Reason,
		Error: &Error{Code: string(fe.Code), Message: msg, Retryable: fe.Retryable, Reason: fe.Reason},
	}
	if b, ok := r.backends[req.Backend]; ok {
		name := b.Name()
		o.Provider = &name
	}
	var he *handleError
	if errors.As(err, &he) && he.handle != "" {
		o.SessionHandle = &he.handle
	}
	return o
}

// handleError carries the session handle of a failed turn.
type handleError struct {
	handle string
	err    error
}

func (h *handleError) Error() string { return h.err.Error() }
func (h *handleError) Unwrap() error { return h.err }

func (r *Runner) withHandle(err error, l Lease) error {
	return &handleError{handle: l.Handle(), err: err}
}

func statusOf(err error) Status {
	switch fault.From(err).Code {
	case fault.Aborted:
		return Cancelled
	case fault.Timeout:
		return TimedOut
	}
	return Failed
}

// record writes a security event; a failing sink must not fail the turn,
// but it is not silent either: the error goes nowhere else safe, so the
// event type is kept minimal and the sink is expected to log.
func (r *Runner) record(e event.Event) {
	_ = r.events.Record(e)
}

// observer fans stream events out to the session history and progress.
type observer struct {
	lease    Lease
	progress func(string)
	next     adapter.Observer
}

func (o *observer) Delta(text string) {
	o.lease.Delta(text)
	if o.next != nil {
		o.next.Delta(text)
	}
}

func (o *observer) Activity(kind, name string) {
	if o.progress != nil {
		o.progress(kind + ": " + name)
	}
	if o.next != nil {
		o.next.Activity(kind, name)
	}
}

func (o *observer) Warning(msg string) {
	if o.next != nil {
		o.next.Warning(msg)
	}
}
