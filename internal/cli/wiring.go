package cli

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/adapter/agy"
	"github.com/coagent8/coagent8/internal/adapter/claude"
	"github.com/coagent8/coagent8/internal/adapter/codex"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/consent"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/mcpserver"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/turn"
)

// stack is everything a command that runs governed turns needs, built
// once: the runner, the one governed path (governor) and the consent gate.
// The MCP server is built over it only by the commands that serve MCP
// ([app.mcpServer]).
type stack struct {
	gov      *governor.Governor
	consent  *consent.Gate
	runner   *turn.Runner
	sessions *lazySessions
	cfg      config.File
	events   event.Sink
	log      *slog.Logger
	closers  []func()
}

// close releases what the stack opened, in the order it was opened.
func (st *stack) close() {
	for _, c := range st.closers {
		c()
	}
}

// build wires backends, the runner and the governor from the environment.
// It never fails for a missing CLI: that is reported per call and by
// doctor.
func (a *app) build(ctx context.Context) (*stack, error) {
	log := a.logger()
	events, closeEvents := a.eventSink(log)
	st := &stack{events: events, log: log, closers: []func(){closeEvents}}
	sessions, closeSessions, err := a.sessionStore(log)
	if err != nil {
		st.close()
		return nil, err
	}
	st.sessions, st.closers = sessions, append(st.closers, closeSessions)
	st.runner, err = turn.New(turn.Options{Env: a.env, Backends: a.backends(), Events: events, Sessions: sessions})
	if err == nil {
		err = a.governance(st)
	}
	if err != nil {
		st.close()
		return nil, err
	}
	return st, nil
}

// mcpServer builds the MCP server over st (serve, doctor); the issue
// recorder it opens is closed with st.
func (a *app) mcpServer(st *stack) (*mcpserver.Server, error) {
	recorder := &issueRecorder{a: a, events: st.events}
	st.closers = append(st.closers, recorder.close)
	return mcpserver.New(mcpserver.Options{Env: a.env, Runner: st.runner, Governor: st.gov, Consent: st.consent,
		Profile: a.toolProfile(st.cfg, st.log), Logger: st.log, DefaultBackend: st.cfg.DefaultBackend,
		DoctorSections: a.doctorSections(), Sessions: st.sessions, IssueRecorder: recorder})
}

func (a *app) backends() []adapter.Backend {
	out := []adapter.Backend{
		claude.New(a.env, claude.Options{APIKeyBilling: a.apiKeyBilling("claude"), CacheDir: filepath.Join(a.env.StateDir(), "cache")}),
	}
	// codex.New only fails on invalid options, which these are not.
	if cx, err := codex.New(a.env, codex.Options{APIKeyBilling: a.apiKeyBilling("codex")}); err == nil {
		out = append(out, cx)
	}
	return append(out, agy.New(a.env, agy.Options{APIKeyBilling: a.apiKeyBilling("agy")}))
}

// logger writes diagnostics to stderr (never stdout: that is the MCP
// channel) through the diagnostic redactor.
func (a *app) logger() *slog.Logger {
	return redact.NewLogger(a.io.Err, a.env.Home(), a.env.Get("COAGENT8_DEBUG") != "")
}

// eventSink opens the security event log in the state directory
// (event.OpenStateLog).
func (a *app) eventSink(log *slog.Logger) (event.Sink, func()) {
	return event.OpenStateLog(a.env.StateDir(), redact.NewDiagnostic(a.env.Home()), log)
}

// toolProfile: the environment variable wins over the configuration. A
// value other than canonical or compact is logged and canonical is used
// (the MCP server would otherwise treat it as canonical silently).
func (a *app) toolProfile(cfg config.File, log *slog.Logger) string {
	for _, k := range []string{"COAGENT8_TOOL_PROFILE", "coagent8_TOOL_PROFILE"} {
		v := a.env.Get(k)
		switch v {
		case "":
			continue
		case mcpserver.Canonical, mcpserver.Compact:
			return v
		}
		if r := []rune(v); len(r) > 32 {
			v = string(r[:32]) + "…"
		}
		log.Warn("unknown tool profile; using canonical", "variable", k, "value", v,
			"accepted", mcpserver.Canonical+", "+mcpserver.Compact)
		return mcpserver.Canonical
	}
	return cfg.ToolProfile
}

// apiKeyBilling reports whether the user opted into API-key billing for a
// backend (COAGENT8_API_KEY_BILLING=claude,codex): only then does the
// provider API key reach that CLI.
func (a *app) apiKeyBilling(backend string) bool {
	for _, b := range splitList(a.env.Get("COAGENT8_API_KEY_BILLING")) {
		if b == backend || b == "all" {
			return true
		}
	}
	return false
}
