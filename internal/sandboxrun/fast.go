package sandboxrun

import (
	"context"
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/exitstatus"
	"github.com/coagent8/coagent8/internal/fault"
)

// Fast runs `coagent8 sandbox run` when args (os.Args[1:]) are exactly
// that command with flags [Flags] accepts, followed by "--" and the
// command, and returns its exit status with ok true. For anything else —
// another command, --help, a flag error, arguments before "--", a missing
// host path — it returns ok false having done nothing, and the full
// command line (package cli) handles args, with the same flags, messages
// and statuses.
//
// It exists for start-up cost: called from an initialiser (package
// sandbox/entry), it runs before the MCP server, SQLite and JSON Schema
// packages are initialised (issue 8 performance).
func Fast(args []string, stdout, stderr io.Writer) (code int, ok bool) {
	if len(args) < 3 || args[0] != "sandbox" || args[1] != "run" {
		return 0, false
	}
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.SetOutput(io.Discard)
	var o Options
	Flags(f, &o)
	if err := f.Parse(args[2:]); err != nil || f.ArgsLenAtDash() != 0 || f.NArg() == 0 {
		return 0, false
	}
	env := config.FromOS()
	if err := checkHostPaths(o, f.Arg(0)); err != nil {
		return 0, false
	}
	// As cmd/coagent8's main: an interrupt or termination cancels the run,
	// which kills the sandboxed tree.
	ctx, stop := exitstatus.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := Run(ctx, env, stdout, stderr, o, f.Args())
	if err == nil {
		return exitstatus.OK, true
	}
	var ue UsageError
	if errors.As(err, &ue) {
		// Run checks host paths and opens the receipt before anything
		// else, so nothing ran.
		return 0, false
	}
	if code, ok := exitstatus.Report(stderr, err); ok {
		return code, true
	}
	code, _ = exitstatus.Report(stderr, fault.From(err))
	return code, true
}
