package cli

import (
	"context"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/doctor"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/price"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// operatorDoctor is the dashboard overview's report: doctor's backends
// (metadata probes only, no prompt), the default backend, and the
// governance and task-sandbox sections, from the configuration as it is
// at each probe. It opens no session store and starts no turn.
func (a *app) operatorDoctor() func(context.Context) doctor.Report {
	return func(ctx context.Context) doctor.Report {
		cfg, _ := config.LoadFile(a.env.ConfigPath())
		return doctor.Run(ctx, doctor.Options{Env: a.env, Backends: a.backends(), Default: cfg.DefaultBackend,
			Sections: map[string]any{"governance": a.operatorGovernance(cfg), "sandbox": a.operatorSandbox()}, Refusal: cfg.GovernanceErr()})
	}
}

// operatorGovernance is the governance in force: limits, model lists and
// the price source with its date.
func (a *app) operatorGovernance(cfg config.File) map[string]any {
	_, prices := price.Load(price.CachePath(a.env.StateDir()))
	gov := map[string]any{"configPath": a.env.ConfigPath(), "prices": prices}
	if err := cfg.GovernanceErr(); err != nil {
		gov["error"] = err.Error()
		gov["reason"] = fault.From(err).Reason
		return gov
	}
	allow, ask, deny := cfg.Governance.Lists()
	gov["askAbovePrice"] = cfg.Governance.AskAbovePrice().FloatString(2)
	gov["priceMultiplier"] = cfg.Governance.PriceMultiplier().FloatString(2)
	gov["models"] = map[string][]string{"allow": nonNil(allow), "ask": nonNil(ask), "deny": nonNil(deny)}
	return gov
}

// operatorSandbox is the task sandbox's readiness: kernel capabilities and
// whether this binary is qualified on this host (nothing runs).
func (a *app) operatorSandbox() any {
	sb, err := sandbox.New(sandbox.Config{StateDir: a.env.StateDir()})
	if err != nil {
		return map[string]any{"available": false, "missing": fault.From(err).Message}
	}
	return sb.Status()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
