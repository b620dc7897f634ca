package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/sandboxrun"
)

// newSandboxCmd is `coagent8 sandbox run|qualify` (issue 8). The commands
// themselves live in package sandboxrun, which also runs `sandbox run`
// from an initialiser before this command line exists (sandboxrun.Fast).
func newSandboxCmd(a *app) *cobra.Command {
	c := &cobra.Command{Use: "sandbox", Short: "Task sandbox: run a command with zero network, a task workspace and outside limits"}
	c.AddCommand(newSandboxRunCmd(a), newSandboxQualifyCmd(a))
	return c
}

func newSandboxRunCmd(a *app) *cobra.Command {
	var o sandboxrun.Options
	c := &cobra.Command{
		Use:   "run [flags] -- /abs/path/to/cmd [args...]",
		Short: "Run one command in the task sandbox and print its containment receipt",
		Long:  sandboxrun.Long,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return badUsage("args.missing", "missing the command: put its absolute path and arguments after --")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return badUsage("args.misplaced", "put the command after --")
			}
			err := sandboxrun.Run(cmd.Context(), a.env, a.io.Out, a.io.Err, o, args)
			var ue sandboxrun.UsageError
			if errors.As(err, &ue) {
				return badUsage(ue.Reason, "%s", ue.Err)
			}
			return err
		},
	}
	sandboxrun.Flags(c.Flags(), &o)
	return c
}

func newSandboxQualifyCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "qualify",
		Short: "Run the containment probes inside the sandbox and record the result for this binary and kernel",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sandboxrun.Qualify(cmd.Context(), a.env, a.io.Out, a.io.Err)
		},
	}
}
