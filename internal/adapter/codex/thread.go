package codex

import (
	"context"
	"errors"
	"fmt"

	"github.com/coagent8/coagent8/internal/adapter/codex/jsonrpc"
	"github.com/coagent8/coagent8/internal/fault"
)

// maxStatusPages bounds mcpServerStatus/list pagination.
const maxStatusPages = 100

// openThread starts (or, with resume set, resumes) a thread with the
// read-only profile and verifies the CLI's report of it.
func (s *session) openThread(ctx context.Context, cwd, model, resume string, servers []string, ephemeral bool) (threadResult, error) {
	p := threadParams{Cwd: cwd, Sandbox: "read-only", ApprovalPolicy: "never", Model: model, Config: threadConfig(servers)}
	method := "thread/start"
	if resume != "" {
		method, p.ThreadID, p.ExcludeTurns = "thread/resume", resume, true
	} else {
		p.Ephemeral = &ephemeral
	}
	var r threadResult
	if err := s.call(ctx, method, p, &r); err != nil {
		return r, resumeError(resume, err)
	}
	if err := verifyThread(r, cwd); err != nil {
		return r, err
	}
	if resume != "" && r.Thread.ID != resume {
		return r, fault.New(fault.SessionInvalid, "codex.session_mismatch", "Codex resumed a different thread than requested.")
	}
	return r, nil
}

// resumeError maps a JSON-RPC refusal of thread/resume (unknown or
// unreadable thread) to SESSION_INVALID.
func resumeError(resume string, err error) error {
	var je *jsonrpc.Error
	if resume != "" && errors.As(err, &je) {
		return fault.Wrap(fault.SessionInvalid, "codex.resume", "Codex could not resume this session.", err)
	}
	return err
}

// checkMCP lists the thread's MCP server status (all pages) and verifies
// every configured server is disabled.
func (s *session) checkMCP(ctx context.Context, threadID string, servers []string) (map[string]string, error) {
	got := map[string]string{}
	var cursor *string
	for page := 0; ; page++ {
		if page == maxStatusPages {
			return nil, fault.New(fault.ProtocolError, "codex.mcp_pages", fmt.Sprintf("Codex returned more than %d pages of MCP status.", maxStatusPages))
		}
		var r mcpStatusResult
		params := mcpStatusParams{ThreadID: threadID, Cursor: cursor, Detail: "toolsAndAuthOnly"}
		if err := s.call(ctx, "mcpServerStatus/list", params, &r); err != nil {
			return nil, err
		}
		for _, d := range r.Data {
			got[d.Name] = deref(d.RuntimeStatus)
		}
		if r.NextCursor == nil || *r.NextCursor == "" {
			break
		}
		cursor = r.NextCursor
	}
	return got, verifyMCP(got, servers)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
