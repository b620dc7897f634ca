package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/version"
)

// newVersionCmd is `coagent8 version`: the line --version prints
// ("coagent8 version V", V from [version.String]). `coagent8 version`
// was an unknown command, exit 2, while --version worked (issue 18 item 6).
func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print coagent8's version (the same line as --version)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(a.io.Out, "coagent8 version %s\n", version.String())
			return err
		},
	}
}
