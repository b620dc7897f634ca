package governor

import (
	"context"
	"strings"
	"sync"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/turn"
)

// Turn is one model turn for [Governor.Run], as a surface translated it.
type Turn struct {
	// Request is the turn; Backend may be "", "auto" or "gemini" (routed
	// by Run). Model is what the caller asked for; Run replaces it with
	// the approved concrete id and sets CheckModel.
	Request turn.Request
	// Consent asks the user when policy says ask. Required: a Turn
	// without one is refused before anything runs.
	Consent Consent
	// Background runs the admitted turn detached from ctx (cancel and
	// process exit still end it) and returns a Running outcome as soon as
	// the session lease is held (wait:false; issue 6 §5). It needs a
	// session: mode none is refused with INVALID_INPUT wait.needs_session.
	Background bool
	// Attach, if set, is called with the admitted request just before a
	// foreground run (to add progress hooks) and returns the function
	// called when the run ends.
	Attach func(*turn.Request) (detach func())
	// Finished, if set, receives the final outcome of a background turn.
	Finished func(turn.Outcome)
}

// Result is what [Governor.Run] returns.
type Result struct {
	// Outcome is the turn's result, failures and refusals included; it
	// is zero when Pending.
	Outcome turn.Outcome
	// Pending reports that consent was asked out of band: nothing ran and
	// the surface returns what its Consent prepared.
	Pending bool
}

// Run is the one governed path of a model turn: routing, the precheck,
// governance and consent (see the package documentation), then the run.
// It always returns; a refusal is an Outcome whose Error carries the
// code and reason (POLICY_DENIED, INVALID_INPUT, ONBOARDING_REQUIRED, …).
func (g *Governor) Run(ctx context.Context, t Turn) Result {
	treq := t.Request
	if t.Consent == nil {
		return g.failed(treq, fault.New(fault.ProcessError, "governor.consent_required", "no way to ask the user for consent was configured"))
	}
	// The caller's own input first, as the terminal checks it: a
	// workspace that does not exist is the error to fix, whatever the
	// backends (a missing CLI was reported instead over MCP).
	if _, err := turn.Workspace(treq.Workspace); err != nil {
		return g.failed(treq, err)
	}
	cfg, _ := g.loadConfig()
	name, err := g.route(cfg, treq.Backend)
	if err != nil {
		return g.failed(treq, err)
	}
	treq.Backend = name
	if err := g.runner.Precheck(treq); err != nil {
		return g.failed(treq, err)
	}
	a, err := g.admit(ctx, cfg, &treq, t.Consent)
	switch {
	case err != nil:
		// admit (or the consent gate it asks) recorded its refusal
		// already: the outcome must not record a second event.
		out := g.runner.Refused(treq, err)
		g.explainAuth(&out, treq.Backend)
		return Result{Outcome: out}
	case a.pending:
		return Result{Pending: true}
	}
	g.pin(&treq, a.model)
	release, err := g.contain(ctx, cfg, &treq, a.rate)
	if err != nil {
		return g.failed(treq, err)
	}
	out := g.execute(ctx, t, treq, release)
	g.explainAuth(&out, treq.Backend)
	if a.warning != "" {
		out.Warnings = append(out.Warnings, a.warning)
	}
	return Result{Outcome: out}
}

// route resolves the requested backend ("", "auto", "gemini" or a name).
// A turn that relies on the configured defaultBackend while it names no
// backend is refused with INVALID_INPUT naming the known ones, never
// routed elsewhere (issue 19 item 11).
func (g *Governor) route(cfg config.File, requested string) (string, error) {
	preferred := cfg.DefaultBackend
	if preferred == "" {
		preferred = g.defaultBackend
	}
	if r := strings.ToLower(requested); r == "" || r == "auto" {
		if err := cfg.DefaultBackendErr(); err != nil {
			return "", err
		}
	}
	return turn.ResolveBackend(g.env, requested, preferred, g.runner)
}

func (g *Governor) failed(treq turn.Request, err error) Result {
	out := g.runner.Failure(treq, err)
	g.explainAuth(&out, treq.Backend)
	return Result{Outcome: out}
}

// execute runs an admitted turn in the foreground, or detached for
// Background; release (the per-turn grant's revocation) runs when the
// turn has ended.
func (g *Governor) execute(ctx context.Context, t Turn, treq turn.Request, release func()) turn.Outcome {
	if t.Background {
		release = sync.OnceFunc(release)
		o := g.background(ctx, treq, func(o turn.Outcome) {
			release()
			if t.Finished != nil {
				t.Finished(o)
			}
		})
		if o.Status != turn.Running {
			release() // refused before it started: no finish will come
		}
		return o
	}
	defer release()
	if t.Attach != nil {
		detach := t.Attach(&treq)
		defer detach()
	}
	return g.runner.Run(ctx, treq)
}
