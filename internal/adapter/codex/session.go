package codex

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/adapter/codex/jsonrpc"
	"github.com/coagent8/coagent8/internal/adapter/jsonl"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/process"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/version"
)

// session is one app-server process and its JSON-RPC connection.
type session struct {
	b       *Backend
	p       *process.Proc
	conn    *jsonrpc.Conn
	ev      *events
	home    string // user home, for diagnostic redaction
	version string
	servers int // MCP servers verified disabled
}

// startSession starts the supervised app-server in dir. procCtx ends the
// process tree; it is separate from the caller's context so a cancel can
// interrupt the turn first.
func (b *Backend) startSession(procCtx context.Context, pr prepared, dir string, deadline, idle time.Duration, ev *events) (*session, error) {
	p, err := process.Start(procCtx, b.spec(pr.path, dir, pr.uc, pr.env, deadline, idle))
	if err != nil {
		return nil, err
	}
	lines := jsonl.NewReader(p.Stdout(), adapter.RecordLimits())
	conn := jsonrpc.New(lines, p.Stdin(), ev, jsonrpc.Options{OnRecord: p.Touch})
	return &session{b: b, p: p, conn: conn, ev: ev, home: b.env.Home()}, nil
}

// call is one metadata request bounded by the backend's RPC timeout.
func (s *session) call(ctx context.Context, method string, params, out any) error {
	ctx, cancel := s.b.rpcContext(ctx)
	defer cancel()
	if err := s.conn.Call(ctx, method, params, out); err != nil {
		return s.rpcError(method, err)
	}
	return nil
}

// rpcError types a failed request. The caller's classification of the
// process end (cancel, deadline, idle) takes precedence later.
func (s *session) rpcError(method string, err error) error {
	var je *jsonrpc.Error
	var rle *jsonrpc.RecordLimitError
	switch {
	case errors.As(err, &rle):
		return fault.Wrap(fault.BufferLimit, "codex.record_limit", fmt.Sprintf(
			"Codex answered %s with a %d-byte record, over the %d-byte limit of a record coagent8 verifies; the turn was refused.",
			method, rle.Size, adapter.MaxRecordBytes), err)
	case errors.As(err, &je):
		return fault.Wrap(fault.ProcessError, "codex.rpc_error",
			"Codex refused "+method+": "+publicMessage(je.Message, s.home), err)
	case errors.Is(err, jsonrpc.ErrClosed):
		return s.exited(err)
	case errors.Is(err, context.DeadlineExceeded):
		return fault.Wrap(fault.Timeout, "codex.rpc_timeout", "Codex did not answer "+method+" in time.", err)
	}
	return fault.Wrap(fault.ProcessError, "codex.rpc", "Codex request "+method+" failed.", err)
}

// exited is the error for an app-server that went away; the stderr tail
// is kept (redacted) as the internal cause only.
func (s *session) exited(err error) error {
	tail := redact.NewDiagnostic(s.home).String(s.p.Stderr())
	return fault.Wrap(fault.ProcessError, "codex.exited",
		"The Codex app-server exited unexpectedly.", errors.Join(err, s.conn.Err(), errors.New(clip(tail, 2000))))
}

// handshake runs initialize/initialized and checks the CLI version.
func (s *session) handshake(ctx context.Context) error {
	var r initializeResult
	params := initializeParams{ClientInfo: clientInfo{Name: "coagent8", Version: version.String()}}
	if err := s.call(ctx, "initialize", params, &r); err != nil {
		return err
	}
	s.version = versionFromUserAgent(r.UserAgent)
	if err := checkVersion(s.version); err != nil {
		return err
	}
	if err := s.conn.Notify("initialized", nil); err != nil {
		return s.exited(err)
	}
	return nil
}

// effectiveServers asks the CLI for its effective configuration as seen
// from the workspace (user, project and managed layers) and returns the
// union of its MCP servers with those read from config.toml.
func (s *session) effectiveServers(ctx context.Context, cwd string, fromFile []string) ([]string, configReadResult, error) {
	var r configReadResult
	if err := s.call(ctx, "config/read", configReadParams{Cwd: cwd, IncludeLayers: true}, &r); err != nil {
		return nil, r, err
	}
	names := make([]string, 0, len(r.Config.MCPServers))
	for n := range r.Config.MCPServers {
		names = append(names, n)
	}
	return union(fromFile, names), r, nil
}

// close ends the process: stdin closed (the app-server exits on EOF),
// a short wait, then the tree is killed.
func (s *session) close() {
	_ = s.p.Stdin().Close()
	select {
	case <-s.p.Done():
	case <-time.After(2 * time.Second):
	}
	s.p.Kill()
}
