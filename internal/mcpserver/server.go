// Package mcpserver exposes coagent8's tools on the official MCP Go SDK.
// It translates only: arguments are decoded strictly (unknown or invalid
// fields refuse the call, R-001/R-003: a tool result with isError under
// MCP 2025-11-25 and later, JSON-RPC invalid params before; see
// [Server.inputError]), every model turn goes through the
// governed path of package governor with consent asked by MCP elicitation
// (package consent), and results are returned as structuredContent plus a
// short text rendering. No argument can add CLI flags or relax a profile
//
package mcpserver

import (
	"context"
	_ "embed"
	"encoding/base64"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/consent"
	"github.com/coagent8/coagent8/internal/crash"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/turn"
	"github.com/coagent8/coagent8/internal/version"
)

//go:embed assets/icon.png
var iconPNG []byte

// Options configure the server. Runner, Governor and Consent are
// required.
type Options struct {
	Env config.Env
	// Runner is the runner the Governor runs turns with; doctor reports
	// its backends.
	Runner *turn.Runner
	// Governor is the governed path every model turn takes.
	Governor *governor.Governor
	// Consent asks the user by MCP elicitation when policy says ask.
	Consent *consent.Gate
	// Profile is "canonical" (default) or "compact"; it changes only which
	// tools tools/list advertises.
	Profile string
	// DefaultBackend is the user's configured default for backend "auto"
	// (doctor reports it; the Governor routes with its own copy).
	DefaultBackend string
	// DoctorSections, if set, returns extra named doctor sections and the
	// configuration's refusal of every turn (config.File.GovernanceErr;
	// nil when the configuration is in force), read together so they
	// describe one configuration.
	DoctorSections func() (sections map[string]any, refusal error)
	// IssueRecorder, if set, records each issue report locally under its
	// own disclosure capacity (issue 10 §5).
	IssueRecorder IssueRecorder
	// Sessions backs the session and cancel tools (nil: they answer that
	// no session archive is configured).
	Sessions SessionStore
	Logger   *slog.Logger
}

// Server holds the MCP server and what its handlers share.
type Server struct {
	mcp    *mcp.Server
	env    config.Env
	runner *turn.Runner
	diag   *redact.Redactor
	log    *slog.Logger
	// guard recovers panics in handlers, middleware and the goroutines
	// they start (recover.go).
	guard *crash.Guard

	defaultBackend string
	doctorSections func() (map[string]any, error)
	gov            *governor.Governor
	consent        *consent.Gate
	issueRecorder  IssueRecorder
	sessions       SessionStore
	jobs           *jobs
	state          *toolState
}

// New builds the MCP server with every tool registered. It fails with
// PROCESS_ERROR when Runner, Governor or Consent is missing.
func New(o Options) (*Server, error) {
	if o.Runner == nil {
		return nil, fault.New(fault.ProcessError, "mcpserver.runner", "mcpserver: runner is required")
	}
	if o.Governor == nil || o.Consent == nil {
		return nil, fault.New(fault.ProcessError, "mcpserver.governance", "mcpserver: governance is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{env: o.Env, runner: o.Runner, diag: redact.NewDiagnostic(o.Env.Home()), log: o.Logger, defaultBackend: o.DefaultBackend, doctorSections: o.DoctorSections,
		issueRecorder: o.IssueRecorder, gov: o.Governor, consent: o.Consent,
		sessions: o.Sessions, jobs: newJobs(), state: newToolState()}
	var err error
	if s.guard, err = crash.New(s.log, s.diag); err != nil {
		return nil, err
	}
	s.mcp = newSDKServer(o.Logger)
	if err := s.register(o.Profile); err != nil {
		return nil, err
	}
	return s, nil
}

// newSDKServer is the SDK server, without tools, logging to log.
func newSDKServer(log *slog.Logger) *mcp.Server {
	return mcp.NewServer(identity(), &mcp.ServerOptions{
		// The SDK logs every session start at info level; only its
		// warnings and errors belong on the host's stderr, and a client's
		// lifecycle mistake is not a server error (see clientMistakes).
		Logger:       slog.New(sdkLog{minLevel{h: log.Handler(), min: slog.LevelWarn}}),
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		Instructions: instructions,
	})
}

// MCP returns the SDK server (to Run or Connect it).
func (s *Server) MCP() *mcp.Server { return s.mcp }

const instructions = `coagent8 consults another local coding agent (Claude Code, Codex, agy) under a verified read-only profile. ` +
	`Call consult with a proposal and the absolute workspace_path, review to get an enforced READY/BLOCKED review of the workspace's Git changes, ` +
	`delegate to hand a task to a sandboxed agent that returns a quarantined patch only the user can admit ` +
	`(request_admission asks the user by an approval form; it admits nothing by itself), ` +
	`doctor to see which backends are ready, issue to prepare a sanitized bug report.`

func identity() *mcp.Implementation {
	return &mcp.Implementation{
		Name:       "coagent8",
		Title:      "coagent8",
		Version:    version.String(),
		WebsiteURL: "https://github.com/coagent8/coagent8",
		Icons:      []mcp.Icon{icon()},
	}
}

func icon() mcp.Icon {
	return mcp.Icon{Source: "data:image/png;base64," + base64.StdEncoding.EncodeToString(iconPNG),
		MIMEType: "image/png", Sizes: []string{"64x64"}}
}

// minLevel drops records below min (unless the inner handler runs at
// debug level, which COAGENT8_DEBUG selects).
type minLevel struct {
	h   slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	if m.h.Enabled(ctx, slog.LevelDebug) {
		return true
	}
	return l >= m.min && m.h.Enabled(ctx, l)
}
func (m minLevel) Handle(ctx context.Context, r slog.Record) error { return m.h.Handle(ctx, r) }
func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler            { return minLevel{m.h.WithAttrs(a), m.min} }
func (m minLevel) WithGroup(n string) slog.Handler                 { return minLevel{m.h.WithGroup(n), m.min} }
