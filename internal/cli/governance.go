package cli

import (
	"log/slog"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/consent"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/mcpserver"
	"github.com/coagent8/coagent8/internal/price"
)

// governance loads the configuration (never fatal: a bad governance
// section refuses turns, tools still list) and the price catalog (cache,
// else the embedded snapshot).
func (a *app) governance(log *slog.Logger, events event.Sink) (mcpserver.Governance, config.File, error) {
	path := a.env.ConfigPath()
	cfg, err := config.LoadFile(path)
	if err != nil {
		log.Warn("configuration problem", "path", path, "error", err.Error())
	}
	cat, st := price.Load(price.CachePath(a.env.StateDir()))
	if st.Warning != "" {
		log.Warn("price catalog", "warning", st.Warning)
	}
	gate, err := consent.New(consent.Options{Sink: events, ConfigPath: path})
	if err != nil {
		return mcpserver.Governance{}, cfg, err
	}
	a.priceStatus = st
	return mcpserver.Governance{ConfigPath: path, Catalog: cat, Consent: gate}, cfg, nil
}

// doctorSections reports governance in force: limits, lists and
// the price source with its date.
func (a *app) doctorSections(cfg config.File) func() map[string]any {
	return func() map[string]any {
		gov := map[string]any{"configPath": a.env.ConfigPath(), "prices": a.priceStatus}
		if err := cfg.GovernanceErr(); err != nil {
			gov["error"] = err.Error()
		} else {
			allow, ask, deny := cfg.Governance.Lists()
			gov["askAbovePrice"] = cfg.Governance.AskAbovePrice().FloatString(2)
			gov["priceMultiplier"] = cfg.Governance.PriceMultiplier().FloatString(2)
			gov["models"] = map[string][]string{"allow": allow, "ask": ask, "deny": deny}
		}
		return map[string]any{"governance": gov}
	}
}
