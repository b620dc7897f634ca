package mcpserver

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/session"
	"github.com/coagent8/coagent8/internal/turn"
)

// CancelArgs are the cancel tool's arguments (contract.md §1).
type CancelArgs struct {
	SessionHandle string `json:"session_handle" jsonschema:"the session whose running turn to stop"`
	WorkspacePath string `json:"workspace_path" jsonschema:"absolute path of the session's project directory"`
}

func cancelSchema(s *jsonschema.Schema) {
	s.Required = []string{"session_handle", "workspace_path"}
	nonEmpty(s, "session_handle", "workspace_path")
}

const cancelDescription = `Stop the running turn of a session (from any connection of the same workspace): ` +
	`its whole process tree is ended, the turn is recorded as cancelled, and the cancelled call still gets its answer. ` +
	`cancelled is false when no turn was running.`

func (s *Server) cancelTool() (*mcp.Tool, mcp.ToolHandler) {
	in, resolved := schemaFor[CancelArgs](cancelSchema)
	out := outputSchemaFor[session.Cancelled]()
	tool := &mcp.Tool{Name: "cancel", Title: "Cancel a running turn", Description: cancelDescription,
		InputSchema: in, OutputSchema: out, Icons: []mcp.Icon{icon()},
		// Not read-only (it ends a running turn) but not destructive: it
		// deletes nothing, the turn is recorded as cancelled and its call
		// still gets its answer; cancelling again changes nothing more
		// (idempotent). Decided for issue 19 item 4; docs/contract.md §1.
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}}
	return tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := decode[CancelArgs](req.Params.Arguments, resolved)
		if err != nil {
			return s.inputError(req, err)
		}
		c, err := s.cancel(ctx, a)
		if err != nil {
			return s.toolError(err), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: c.Message}}, StructuredContent: c}, nil
	}
}

func (s *Server) cancel(ctx context.Context, a CancelArgs) (session.Cancelled, error) {
	if s.sessions == nil {
		return session.Cancelled{}, fault.New(fault.HistoryError, "session.unconfigured", "No session archive is configured.")
	}
	ws, err := turn.Workspace(a.WorkspacePath)
	if err != nil {
		return session.Cancelled{}, err
	}
	if isJob(a.SessionHandle) {
		return s.cancelJob(ctx, ws, a.SessionHandle) // a delegate job (delegate.go)
	}
	return s.sessions.Cancel(ctx, ws, a.SessionHandle)
}
