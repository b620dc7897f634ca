package turn

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/fingerprint"
	"github.com/coagent8/coagent8/internal/redact"
)

// Limits on what leaves (contract.md §2, §7).
const (
	MaxOutputBytes  = 1 << 20
	MaxWarningBytes = 512
)

// Request is one validated-at-run turn request.
type Request struct {
	Backend string
	Prompt  string
	// ContextFiles are the file names the prompt names (checked only:
	// see [ContextFile]).
	ContextFiles  []string
	Workspace     string // as given; validated by Run
	Model         string // requested ("" = backend default)
	Effort        string
	SessionHandle string
	SessionMode   string
	Timeout       time.Duration
	// OutputSchema, if non-nil, is a JSON Schema the answer must meet
	// (review envelopes); backends that cannot enforce it ignore it.
	OutputSchema map[string]any
	// CheckModel, if set, refuses a backend-reported model other than the
	// approved one (set by governance).
	CheckModel func(reported string) error
	// Progress, if set, receives short status lines while the turn runs.
	Progress func(msg string)
	// Observer, if set, also receives the backend's raw stream events.
	Observer adapter.Observer
	// Launcher, if set, starts the backend's CLI (the kernel read
	// profile; chosen by governance) and ContainmentReason says why the
	// turn gets the containment it does.
	Launcher          adapter.Launcher
	ContainmentReason string
	// Started, if set, is called once the session lease is held, before the
	// backend starts, with the session handle ("" for mode none) and the
	// turn number (background mode returns these at once).
	Started func(handle string, turn int)
}

// Runner runs turns. It is safe for concurrent use.
type Runner struct {
	env      config.Env
	backends map[string]adapter.Backend
	sessions Sessions
	events   event.Sink
	answer   *redact.Redactor
	diag     *redact.Redactor
}

// Options configure a [Runner]. Backends must not be empty.
type Options struct {
	Env      config.Env
	Backends []adapter.Backend
	Sessions Sessions   // nil = NewMemory()
	Events   event.Sink // nil = event.Discard{}
}

// New returns a Runner.
func New(o Options) (*Runner, error) {
	if len(o.Backends) == 0 {
		return nil, fault.New(fault.ProcessError, "turn.no_backends", "no backends configured")
	}
	r := &Runner{env: o.Env, backends: map[string]adapter.Backend{}, sessions: o.Sessions, events: o.Events,
		answer: redact.NewAnswer(), diag: redact.NewDiagnostic(o.Env.Home())}
	for _, b := range o.Backends {
		r.backends[b.Name()] = b
	}
	if r.sessions == nil {
		r.sessions = NewMemory()
	}
	if r.events == nil {
		r.events = event.Discard{}
	}
	return r, nil
}

// Backend returns the named backend, or nil.
func (r *Runner) Backend(name string) adapter.Backend { return r.backends[name] }

// Backends returns the configured backends.
func (r *Runner) Backends() []adapter.Backend {
	out := make([]adapter.Backend, 0, len(r.backends))
	for _, name := range []string{"claude", "codex", "agy"} {
		if b, ok := r.backends[name]; ok {
			out = append(out, b)
		}
	}
	return out
}

// Run executes the turn and always returns an Outcome (failures included).
func (r *Runner) Run(ctx context.Context, req Request) Outcome {
	start := time.Now()
	out, err := r.run(ctx, req, start)
	if err != nil {
		return r.failed(req, err, start)
	}
	return out
}

func (r *Runner) run(ctx context.Context, req Request, start time.Time) (Outcome, error) {
	b, turn, err := r.admit(req)
	if err != nil {
		return Outcome{}, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lease, err := r.sessions.Begin(ctx, Begin{Handle: req.SessionHandle, Workspace: turn.Workspace,
		Backend: b.Name(), Mode: req.SessionMode, Model: req.Model, Prompt: req.Prompt, Cancel: cancel})
	if err != nil {
		return Outcome{}, err
	}
	if req.Started != nil {
		req.Started(lease.Handle(), lease.Turn())
	}
	turn.SessionID = lease.NativeID()
	turn.Observer = &observer{lease: lease, progress: req.Progress, next: req.Observer}
	before := fingerprint.Take(turn.Workspace)
	res, err := b.Run(ctx, turn)
	if err == nil {
		err = r.unchanged(b.Name(), turn.Workspace, before, &res)
	}
	if err != nil {
		lease.End(context.WithoutCancel(ctx), End{Status: statusOf(err), ErrCode: string(fault.From(err).Code), Reason: fault.From(err).Reason})
		return Outcome{}, r.withHandle(err, lease)
	}
	r.record(event.Event{Type: event.TypeVerification, Reason: "profile.verified", Backend: b.Name(), Model: res.Model, Detail: res.Verified})
	return r.completed(ctx, req, b.Name(), res, lease, start), nil
}

// admit checks everything that can be checked before a process starts.
func (r *Runner) admit(req Request) (adapter.Backend, adapter.Turn, error) {
	if r.env.InTurn() {
		return nil, adapter.Turn{}, fault.New(fault.NestedTurn, "nested_turn",
			"coagent8 is running inside a coagent8 turn; nested turns are refused.")
	}
	b, ok := r.backends[req.Backend]
	if !ok {
		return nil, adapter.Turn{}, fault.New(fault.InvalidInput, "backend.unknown",
			"unknown backend "+quoteShort(req.Backend)+"; use auto, claude, codex or agy")
	}
	ws, err := Workspace(req.Workspace)
	if err != nil {
		return nil, adapter.Turn{}, err
	}
	if err := Prompt(req.Prompt); err != nil {
		return nil, adapter.Turn{}, err
	}
	for _, f := range req.ContextFiles {
		if err := ContextFile(f); err != nil {
			return nil, adapter.Turn{}, err
		}
	}
	if req.Model != "" {
		if err := adapter.ValidModel(req.Model); err != nil {
			return nil, adapter.Turn{}, err
		}
	}
	if req.Effort != "" {
		if err := adapter.ValidEffort(req.Effort); err != nil {
			return nil, adapter.Turn{}, err
		}
	}
	return b, adapter.Turn{Prompt: req.Prompt, Workspace: ws, Model: req.Model, Effort: req.Effort,
		Deadline: req.Timeout, CheckModel: req.CheckModel, OutputSchema: req.OutputSchema, Launcher: req.Launcher}, nil
}

func quoteShort(s string) string {
	if len(s) > 32 {
		s = s[:32] + "…"
	}
	return `"` + s + `"`
}

// unchanged compares the workspace with its state before the read-only
// turn: any change withholds the answer, whoever made it, because
// coagent8 cannot tell a backend write from a concurrent one. A tree too
// large to fingerprint is reported as a warning, not as verified.
func (r *Runner) unchanged(backend, ws string, before fingerprint.Snapshot, res *adapter.Result) error {
	after := fingerprint.Take(ws)
	if !before.Measured() || !after.Measured() {
		res.Warnings = append(res.Warnings, "The workspace was too large to fingerprint; it was not checked for changes after the turn.")
		return nil
	}
	changed := before.Changes(after, 5)
	if len(changed) == 0 {
		return nil
	}
	r.record(event.Event{Type: event.TypeRefusal, Code: string(fault.SandboxUnavailable), Reason: "workspace_changed",
		Backend: backend, Detail: fmt.Sprintf("%d path(s) changed", len(changed))})
	return recorded{fault.New(fault.SandboxUnavailable, "workspace_changed",
		"The workspace changed during the read-only turn (first changed: "+strings.Join(changed, ", ")+"); the answer was withheld.")}
}
