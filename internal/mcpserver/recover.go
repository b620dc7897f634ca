package mcpserver

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/fault"
)

// recovered wraps tool handler h of tool name so that a panic in it ends
// that call, not the process: the SDK (v1.8.0) does not recover handler
// panics, and the process also runs the delegate jobs and turns other
// calls started, which a crash would end mid-run. The caller gets a
// PROCESS_ERROR internal.panic result; the panic value and stack are
// logged after diagnostic redaction (they may hold argument text).
func (s *Server) recovered(name string, h mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			cause, _ := s.diag.Bound(fmt.Sprintf("%v\n%s", v, debug.Stack()), 16<<10)
			s.log.Error("tool handler panicked", "tool", name, "panic", cause)
			res, err = s.toolError(fault.New(fault.ProcessError, "internal.panic",
				"coagent8 hit an internal error in "+name+"; nothing else was affected. The log has the details.")), nil
		}()
		return h(ctx, req)
	}
}
