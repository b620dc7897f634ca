package governor

import (
	"context"
	"math/big"
	"slices"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
	"github.com/coagent8/coagent8/internal/turn"
)

// admission is the admitted model of one turn.
type admission struct {
	model string
	// rate prices the turn's grant in the kernel read profile ([turnRate]).
	rate    *big.Rat
	warning string
	pending bool
}

// admit runs, before any backend session: the configuration check, the
// routing check, concrete model resolution (metadata-only probes), the
// policy decision and, where it says ask, the backend's login and then
// consent. treq.Backend is routed; cfg is the configuration as read for
// this turn.
func (g *Governor) admit(ctx context.Context, cfg config.File, treq *turn.Request, c Consent) (admission, error) {
	if err := cfg.GovernanceErr(); err != nil {
		return admission{}, g.refuse(err, treq.Backend, treq.Model, "")
	}
	if err := routed(cfg, treq.Backend); err != nil {
		return admission{}, g.refuse(err, treq.Backend, treq.Model, "routing.allowedBackends")
	}
	ws, err := turn.Workspace(treq.Workspace)
	if err != nil {
		return admission{}, err
	}
	concrete, def, err := g.models.resolve(ctx, g.runner.Backend(treq.Backend), ws, treq.Model)
	if turn.IsRefusal(err) {
		// The resolution probe verifies the CLI's profile report: its
		// refusal (SANDBOX_UNAVAILABLE, AUTH_REQUIRED…) is a security
		// event like any other, and Run records none after admit.
		return admission{}, g.refuse(err, treq.Backend, treq.Model, "")
	}
	if err != nil {
		return admission{}, err
	}
	d := policy.Decide(cfg.Governance, g.catalog, policy.Input{Backend: treq.Backend, Requested: concrete, Default: def, Effort: treq.Effort})
	if d.Effect == policy.Ask {
		// Never ask the user to approve a turn that cannot run (issue 19
		// item 11): a backend whose own probe says it is not logged in is
		// refused before the question.
		if err := g.authenticated(ctx, treq.Backend); err != nil {
			return admission{}, g.refuse(err, d.Backend, d.Model, "")
		}
	}
	return g.consent(ctx, d, c)
}

// loadConfig re-reads the user's configuration. The environment's own
// path goes through [config.Env.Load], so a COAGENT8_CONFIG naming a
// missing file refuses turns instead of running on the defaults.
func (g *Governor) loadConfig() (config.File, error) {
	if g.configPath == g.env.ConfigPath() {
		return g.env.Load()
	}
	return config.LoadFile(g.configPath)
}

// routed refuses a backend outside routing.allowedBackends (nil = all);
// "gemini" there still admits agy, its new name.
func routed(cfg config.File, backend string) error {
	if cfg.AllowedBackends == nil || slices.Contains(cfg.AllowedBackends, backend) ||
		(backend == "agy" && slices.Contains(cfg.AllowedBackends, "gemini")) {
		return nil
	}
	return fault.New(fault.PolicyDenied, "routing.backend_not_allowed",
		"backend "+backend+" is not in routing.allowedBackends of the coagent8 configuration")
}

// consent applies the decision: allow passes, ask goes to c, deny (and
// an effect this code does not know) is refused.
func (g *Governor) consent(ctx context.Context, d policy.Decision, c Consent) (admission, error) {
	switch d.Effect {
	case policy.Allow:
		return admission{model: d.Model, rate: turnRate(d.Price, d.AskAbove)}, nil
	case policy.Ask:
		ans, err := c.Ask(ctx, d)
		if err != nil {
			return admission{}, withRemedy(err, d)
		}
		return admission{model: d.Model, rate: turnRate(d.Price, d.AskAbove), warning: ans.Warning, pending: ans.Pending}, nil
	case policy.Deny:
		return admission{}, g.refuse(d.Err(), d.Backend, d.Model, d.Rule)
	}
	return admission{}, g.refuse(fault.New(fault.PolicyDenied, "governor.invalid_effect", "the governance decision was not understood"),
		d.Backend, d.Model, d.Rule)
}

// pin makes the turn run exactly the approved model and refuse any other
// the backend reports.
func (g *Governor) pin(treq *turn.Request, model string) {
	treq.Model = model
	// The turn records the refusal when the run fails on it (with the
	// pinned model): recording here too made two events of one refusal.
	treq.CheckModel = func(reported string) error {
		return policy.CheckReported(model, reported)
	}
}

// refuse records the one security event of a refusal raised here and
// returns err as a *fault.Error. The cause goes to Detail (the sink
// redacts it); prompt text never reaches here.
func (g *Governor) refuse(err error, backend, model, rule string) error {
	fe := fault.From(err)
	e := event.Event{Type: event.TypeRefusal, Code: string(fe.Code), Reason: fe.Reason, Backend: backend, Rule: rule}
	if policy.ValidID(model) {
		e.Model = model
	}
	if cause := fe.Cause(); cause != nil {
		e.Detail = cause.Error()
	}
	_ = g.events.Record(e) // a failing sink must not turn a refusal into a run
	return fe
}
