package cli

import (
	"context"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/mcpserver"
)

func newServeCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP over stdio (the default with no arguments)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context())
		},
	}
}

// serve runs the MCP server on stdin/stdout until the client disconnects
// (stdin EOF, once every request already read is answered) or a signal
// cancels ctx; a signal cancels running turns, which tears their process
// trees down. Both ends are orderly and exit 0
// without an error log (issue 19 item 18); a malformed stdin line is
// answered and skipped, never the end of the session (item 1).
func (a *app) serve(ctx context.Context) error {
	st, err := a.build(ctx)
	if err != nil {
		return err
	}
	defer st.close()
	srv, err := a.mcpServer(st)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := &mcpserver.StdioTransport{In: a.io.In, Out: a.io.Out}
	// Start-up garbage (tool schemas, migrations, the price catalog) is
	// returned to the OS before the server idles: hosts keep many MCP
	// servers running (issue 2: idle RSS target).
	debug.FreeOSMemory()
	return srv.Serve(ctx, t)
}
