package mcpserver

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Serve runs one MCP session over t until the client disconnects (stdin
// EOF) or ctx is cancelled (a signal); either is an orderly end and
// returns nil, logged at info level. It replaces [mcp.Server.Run], which
// logs every cancelled run as level=ERROR "server run cancelled" (issue
// 19 item 18). Any other end of the session is returned.
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-ended
		s.log.Info("mcp session stopped", "cause", context.Cause(ctx).Error())
		return nil
	case err := <-ended:
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
			return err
		}
		s.log.Info("mcp session ended by the client")
		return nil
	}
}

// refuseSetLevel is receiving middleware answering logging/setLevel with
// -32601 method not found, whatever the level: coagent8 sends no log
// notifications and so does not declare the logging capability (MCP
// server utilities, logging: servers that emit log notifications MUST
// declare it), and the SDK would otherwise accept the method silently
// (issue 19 item 5).
func refuseSetLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "logging/setLevel" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
				Message: "Method not found: logging/setLevel (coagent8 sends no log messages and does not declare the logging capability)"}
		}
		return next(ctx, method, req)
	}
}
