package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/session"
	"github.com/coagent8/coagent8/internal/turn"
)

// SessionStore is what the session and cancel tools need; *session.Store
// implements it. Every method is scoped to the canonical workspace: a
// handle of another workspace is SESSION_INVALID like an unknown one.
type SessionStore interface {
	List(ctx context.Context, workspace string) ([]session.Info, error)
	Status(ctx context.Context, workspace, handle string) (session.Info, error)
	Result(ctx context.Context, workspace, handle string, turn int) (session.Result, error)
	History(ctx context.Context, workspace, handle, cursor string, limit int) (session.Page, error)
	CloseSession(ctx context.Context, workspace, handle string, deleteHistory bool) error
	Cancel(ctx context.Context, workspace, handle string) (session.Cancelled, error)
}

var _ SessionStore = (*session.Store)(nil)

// SessionArgs are the session tool's arguments (contract.md §1, §6).
// workspace_path is required: it is the only scope a caller can see.
type SessionArgs struct {
	Action        string `json:"action" jsonschema:"list, history, close, status or result"`
	WorkspacePath string `json:"workspace_path" jsonschema:"absolute path of the project directory whose sessions to use"`
	SessionHandle string `json:"session_handle,omitempty" jsonschema:"the session (all actions but list)"`
	Cursor        string `json:"cursor,omitempty" jsonschema:"history: nextCursor of the previous page"`
	Limit         int    `json:"limit,omitempty" jsonschema:"history: events per page (1..100, default 50)"`
	DeleteHistory bool   `json:"delete_history,omitempty" jsonschema:"close: also delete the session's history"`
	Turn          int    `json:"turn,omitempty" jsonschema:"result: turn number (default the last)"`
}

func sessionSchema(s *jsonschema.Schema) {
	s.Required = []string{"action", "workspace_path"}
	nonEmpty(s, "workspace_path", "session_handle", "cursor")
	enum(s, "action", "list", "history", "close", "status", "result")
	s.Properties["limit"].Minimum, s.Properties["limit"].Maximum = ptr(1.0), ptr(100.0)
	s.Properties["turn"].Minimum = ptr(1.0)
}

const sessionDescription = `List, read, poll or close coagent8 sessions of one workspace. ` +
	`history pages the archived conversation (cursor from nextCursor; HISTORY_CHANGED means restart without a cursor); ` +
	`status and result poll a turn started with wait:false. Sessions of other workspaces are never visible.`

func (s *Server) sessionTool() (*mcp.Tool, mcp.ToolHandler) {
	in, resolved := schemaFor[SessionArgs](sessionSchema)
	tool := &mcp.Tool{Name: "session", Title: "coagent8 sessions", Description: sessionDescription,
		InputSchema: in, Icons: []mcp.Icon{icon()},
		// Destructive: close with delete_history deletes the archived
		// conversation, which cannot be undone (issue 19 item 4).
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}}
	return tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := decode[SessionArgs](req.Params.Arguments, resolved)
		if err != nil {
			return s.inputError(req, err)
		}
		v, err := s.sessionAction(ctx, a)
		if err != nil {
			return s.toolError(err), nil
		}
		if o, ok := v.(turn.Outcome); ok {
			return s.render(o), nil
		}
		return jsonResult(v), nil
	}
}

func (s *Server) sessionAction(ctx context.Context, a SessionArgs) (any, error) {
	if s.sessions == nil {
		return nil, fault.New(fault.HistoryError, "session.unconfigured", "No session archive is configured.")
	}
	ws, err := turn.Workspace(a.WorkspacePath)
	if err != nil {
		return nil, err
	}
	if a.Action != "list" && a.SessionHandle == "" {
		return nil, fault.New(fault.InvalidInput, "session.handle_missing", "session_handle is required for "+a.Action+".")
	}
	if isJob(a.SessionHandle) && (a.Action == "status" || a.Action == "result") {
		return s.gov.JobStatus(ctx, ws, a.SessionHandle) // a delegate job (delegate.go)
	}
	switch a.Action {
	case "list":
		l, err := s.sessions.List(ctx, ws)
		return map[string]any{"schemaVersion": 1, "sessions": l}, err
	case "history":
		return s.sessions.History(ctx, ws, a.SessionHandle, a.Cursor, a.Limit)
	case "close":
		err := s.sessions.CloseSession(ctx, ws, a.SessionHandle, a.DeleteHistory)
		return map[string]any{"schemaVersion": 1, "sessionHandle": a.SessionHandle, "closed": err == nil}, err
	case "status":
		i, err := s.sessions.Status(ctx, ws, a.SessionHandle)
		return map[string]any{"schemaVersion": 1, "session": i}, err
	}
	return s.result(ctx, ws, a.SessionHandle, a.Turn)
}

// result returns the turn's outcome in consult's shape: the full outcome
// if this process ran it in the background, else rebuilt from the archive.
func (s *Server) result(ctx context.Context, ws, handle string, n int) (any, error) {
	r, err := s.sessions.Result(ctx, ws, handle, n)
	if err != nil {
		return nil, err
	}
	if o, ok := s.jobs.get(jobKey(handle, r.Turn)); ok {
		return o, nil
	}
	h := handle
	o := turn.Outcome{SchemaVersion: 1, Status: turn.Status(r.Status), Output: r.Output, SessionHandle: &h,
		Turn: r.Turn, HistoryAvailable: r.HistoryAvailable, Verdict: turn.VerdictNotApplicable, Model: r.Model,
		ModelUsed: r.Model, Reason: r.Reason}
	if r.ErrorCode != "" {
		o.Error = &turn.Error{Code: r.ErrorCode, Message: "The turn ended with " + r.ErrorCode + " (" + r.Reason + ").", Reason: r.Reason}
	}
	return o, nil
}

// toolError renders a typed failure as a tool error result.
func (s *Server) toolError(err error) *mcp.CallToolResult {
	fe := fault.From(err)
	msg, _ := s.diag.Bound(fe.Message, 4096)
	body := map[string]any{"schemaVersion": 1, "error": turn.Error{Code: string(fe.Code), Message: msg, Retryable: fe.Retryable, Reason: fe.Reason}}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "> Error [" + string(fe.Code) + "]: " + msg}},
		StructuredContent: body, IsError: true}
}

func jsonResult(v any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}
}
