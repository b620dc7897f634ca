package cli

import (
	"context"

	"github.com/spf13/cobra"
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

func (a *app) serve(ctx context.Context) error {
	return nil // wired in the MCP server commit
}
