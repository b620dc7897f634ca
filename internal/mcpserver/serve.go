package mcpserver

import (
	"context"
	"errors"
	"io"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/exitstatus"
)

// Serve runs one MCP session over t until the client disconnects (stdin
// EOF, or a broken pipe when the host closed its end first) or ctx is
// cancelled (a signal); either is an orderly end and returns nil. A
// disconnect is logged at debug level only: it is how every host ends
// every session, and a line on the host's stderr each time read as a
// fault; a signal is logged at info level. It replaces [mcp.Server.Run],
// which logs every cancelled run as level=ERROR "server run cancelled"
// (issue 19 item 18). Any other end of the session is returned.
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
		if err != nil && !disconnected(err) {
			return err
		}
		if err == nil {
			err = io.EOF
		}
		s.log.Debug("mcp session ended by the client", "cause", err.Error())
		return nil
	}
}

// disconnected reports whether err, the end of a session, is the client
// going away: end of input, or a write to the pipe or socket it closed.
func disconnected(err error) bool {
	for _, e := range []error{io.EOF, context.Canceled, syscall.ECONNRESET} {
		if errors.Is(err, e) {
			return true
		}
	}
	// EPIPE, io.ErrClosedPipe and Windows' ERROR_BROKEN_PIPE/ERROR_NO_DATA:
	// the same test the command line uses for its stdout.
	return exitstatus.IsBrokenPipe(err)
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
