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
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/mcpserver"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/turn"
)

// stack is everything a serve or a one-shot command needs, built once.
type stack struct {
	server *mcpserver.Server
	runner *turn.Runner
	events event.Sink
	log    *slog.Logger
	close  func()
}

// build wires backends, the runner and the MCP server from the
// environment. It never fails for a missing CLI: that is reported per
// call and by doctor.
func (a *app) build(ctx context.Context) (*stack, error) {
	log := a.logger()
	events, closeEvents := a.eventSink(log)
	sessions, closeSessions, err := a.sessionStore(log)
	if err != nil {
		closeEvents()
		return nil, err
	}
	closeEvents = func(close func()) func() { return func() { close(); closeSessions() } }(closeEvents)
	runner, err := turn.New(turn.Options{Env: a.env, Backends: a.backends(), Events: events, Sessions: sessions})
	if err != nil {
		closeEvents()
		return nil, err
	}
	recorder := &issueRecorder{a: a, events: events}
	closeEvents = func(close func()) func() { return func() { close(); recorder.close() } }(closeEvents)
	gov, cfg, err := a.governance(log, events)
	if err != nil {
		closeEvents()
		return nil, err
	}
	srv, err := mcpserver.New(mcpserver.Options{Env: a.env, Runner: runner, Profile: a.toolProfile(cfg, log), Logger: log,
		Governance: gov, DefaultBackend: cfg.DefaultBackend, DoctorSections: a.doctorSections(), Sessions: sessions,
		Verifier: a.verifier(log, events), IssueRecorder: recorder})
	if err != nil {
		closeEvents()
		return nil, err
	}
	return &stack{server: srv, runner: runner, events: events, log: log, close: closeEvents}, nil
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
