package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
		defer s.guard.Recover(name, func(e error) { res, err = s.toolError(e), nil })
		return h(ctx, req)
	}
}

// recoverMethods is receiving middleware that recovers a panic in the
// middleware and method handlers it wraps (a tools/list filter, the SDK's
// own handlers), which [Server.recovered] does not reach: the request is
// answered with PROCESS_ERROR internal.panic — a tool error result for
// tools/call, else JSON-RPC -32603 whose data is {code, reason} — and the
// server goes on.
func (s *Server) recoverMethods(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer s.guard.Recover("the "+method+" request", func(e error) {
			if method == "tools/call" {
				res, err = s.toolError(e), nil
				return
			}
			res, err = nil, rpcError(e)
		})
		return next(ctx, method, req)
	}
}

// rpcError is typed error e as a JSON-RPC internal error: its public
// message, and its code and reason as data.
func rpcError(e error) *jsonrpc.Error {
	fe := fault.From(e)
	data, _ := json.Marshal(map[string]string{"code": string(fe.Code), "reason": fe.Reason})
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fe.Error(), Data: data}
}
