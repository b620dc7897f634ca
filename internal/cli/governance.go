package cli

import (
	"errors"
	"log/slog"
	"strings"
	"sync"

	"github.com/coagent8/coagent8/internal/consent"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/policy"
	"github.com/coagent8/coagent8/internal/price"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// governance loads the configuration (never fatal: a bad governance
// section refuses turns, tools still list), prepares the price catalog
// (cache, else the embedded snapshot, parsed on first use) and the consent
// gate, and builds the governor over st.runner: st.cfg, st.consent and
// st.gov.
func (a *app) governance(st *stack) error {
	path := a.env.ConfigPath()
	cfg, err := a.env.Load()
	if err != nil {
		st.log.Warn("configuration problem", configProblem(path, err)...)
	}
	st.cfg = cfg
	if st.consent, err = consent.New(consent.Options{Sink: st.events, ConfigPath: path}); err != nil {
		return err
	}
	a.prices = &lazyCatalog{path: price.CachePath(a.env.StateDir()), log: st.log}
	del := &lazyDelegation{a: a, log: st.log, events: st.events} // delegate jobs (issue 16), opened on first use
	st.closers = append(st.closers, del.close)
	st.gov, err = governor.New(governor.Options{Env: a.env, Runner: st.runner, ConfigPath: path, Catalog: a.prices,
		Events: st.events, DefaultBackend: cfg.DefaultBackend, Verifier: a.verifier(st.log, st.events), Delegation: del.open,
		Logger: st.log})
	return err
}

// configProblem is the log attributes of the configuration's load error:
// its path, its reason when it has one (config.literal_credential, as the
// refusals that follow name it) and the error.
func configProblem(path string, err error) []any {
	attrs := []any{"path", path}
	var fe *fault.Error
	if errors.As(err, &fe) {
		attrs = append(attrs, "reason", fe.Reason)
	}
	return append(attrs, "error", err.Error())
}

// lazyCatalog loads the price catalog when a decision first needs it, so
// a server start (and a turn on an allow-listed model) does not pay for
// parsing it.
type lazyCatalog struct {
	path string
	log  *slog.Logger
	once sync.Once
	cat  *price.Catalog
	st   price.Status
}

var _ policy.Catalog = (*lazyCatalog)(nil)

func (l *lazyCatalog) load() {
	l.once.Do(func() {
		l.cat, l.st = price.Load(l.path)
		if l.st.Warning != "" {
			l.log.Warn("price catalog", "warning", l.st.Warning)
		}
	})
}

// Len implements policy.Catalog.
func (l *lazyCatalog) Len() int { l.load(); return l.cat.Len() }

// Quote implements policy.Catalog.
func (l *lazyCatalog) Quote(backend, model string) policy.Quote {
	l.load()
	return l.cat.Quote(backend, model)
}

// Status reports the catalog in force (doctor).
func (l *lazyCatalog) Status() price.Status { l.load(); return l.st }

// doctorSections reports governance in force: limits, lists and
// the price source with its date, from the configuration as it is now;
// the task sandbox's readiness; and that configuration's refusal of every
// turn (nil when it is in force), which doctor leads its advice with.
func (a *app) doctorSections() func() (map[string]any, error) {
	return func() (map[string]any, error) {
		cfg, loadErr := a.env.Load()
		gov := map[string]any{"configPath": a.env.ConfigPath(), "prices": a.prices.Status()}
		if err := cfg.GovernanceErr(); err != nil {
			gov["error"] = err.Error()
			gov["reason"] = fault.From(err).Reason // which refusal, for scripts
			if loadErr != nil {
				// doctor is the user's own diagnostic: the cause (which
				// key, what is wrong) redacted and bounded, not only the
				// refusal every turn gets.
				gov["cause"] = boundedCause(redact.NewDiagnostic(a.env.Home()).String(loadErr.Error()))
			}
		} else {
			allow, ask, deny := cfg.Governance.Lists()
			gov["askAbovePrice"] = cfg.Governance.AskAbovePrice().FloatString(2)
			gov["priceMultiplier"] = cfg.Governance.PriceMultiplier().FloatString(2)
			gov["models"] = map[string][]string{"allow": orEmpty(allow), "ask": orEmpty(ask), "deny": orEmpty(deny)}
		}
		return map[string]any{"governance": gov, "sandbox": a.sandboxStatus()}, cfg.GovernanceErr()
	}
}

// sandboxStatus is doctor's task-sandbox section: capabilities and whether
// this binary is qualified here (nothing runs).
func (a *app) sandboxStatus() any {
	sb, err := sandbox.New(sandbox.Config{StateDir: a.env.StateDir()})
	if err != nil {
		return map[string]any{"available": false, "missing": fault.From(err).Message}
	}
	return sb.Status()
}

// orEmpty makes an empty list print as [] rather than null.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// boundedCause keeps the first 1,000 bytes of a cause (valid UTF-8).
func boundedCause(s string) string {
	if len(s) > 1000 {
		s = strings.ToValidUTF8(s[:1000], "") + "…"
	}
	return s
}
