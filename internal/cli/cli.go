// Package cli implements coagent8's command line: with no arguments it serves
// MCP over stdio; subcommands run the same operations from a terminal.
//
// Each subcommand lives in its own file with a constructor newXCmd(app) and
// is registered in [newRoot]. Exit codes are typed ([ExitCode]).
//
// # Errors and exit codes
//
// A command's RunE returns one of:
//   - nil: exit 0;
//   - usageError: bad flags or arguments, an INVALID_INPUT fault (reason
//     args.* or flag.*) printed as the others are, plus a help hint, exit 2;
//   - a *fault.Error: printed with its code and reason; the code picks the
//     exit status (see [app.report]);
//   - exitError{code, msg}: the command asks for exit status code itself
//     (`sandbox run` passes on its command's status, 124 on a timeout,
//     128+N for signal N); msg, when set, is printed as "coagent8: msg";
//   - any other error: a failure inside the command, reported as the generic
//     internal PROCESS_ERROR (exit 1) so an unvetted message never reaches
//     the terminal.
//
// Errors cobra raises itself (unknown command, wrong argument count, missing
// required flag) never pass through a RunE; they reach [app.report] as plain
// errors and are usage errors too (INVALID_INPUT, exit 2).
//
// Whatever the kind, the printed text is redacted with the diagnostic
// profile, as the logs are: the home directory appears as "~". A command
// that fails once its stdout's reader went away prints nothing and exits
// 141, as SIGPIPE ends it on Unix.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/exitstatus"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/version"
)

// Stdio holds the process's standard streams.
type Stdio struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// ExitCode is the process exit status.
type ExitCode = int

// Exit codes.
const (
	ExitOK      ExitCode = exitstatus.OK
	ExitFailure ExitCode = exitstatus.Failure // the operation ran and failed (typed error printed)
	ExitUsage   ExitCode = exitstatus.Usage   // bad flags or arguments
	ExitRefused ExitCode = exitstatus.Refused // refused by policy or an unavailable sandbox
)

// app carries what every subcommand needs.
type app struct {
	prices *lazyCatalog
	ctx    context.Context
	io     Stdio
	env    config.Env
}

// Main runs the command line and returns the exit code.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	return MainEnv(ctx, args, stdio, config.FromOS())
}

// MainEnv is [Main] with an explicit environment (tests, testscript).
// A command that fails once its stdout's reader went away prints nothing
// and returns [exitstatus.BrokenPipe]: the failure is that write's, or
// nobody reads what it would say (see [stdout]).
func MainEnv(ctx context.Context, args []string, stdio Stdio, env config.Env) int {
	out := &stdout{w: stdio.Out}
	stdio.Out = out
	a := &app{ctx: ctx, io: stdio, env: env}
	root := newRoot(a)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	switch {
	case err == nil:
		return ExitOK
	case out.gone.Load():
		return exitstatus.BrokenPipe
	}
	return a.report(cmd, err)
}

// report prints err for the terminal and returns the exit status. cmd is
// the command that ran or failed to parse (for the help hint). The text
// goes through the diagnostic redaction, as the logs and the security
// events do: the home directory is shown as "~" and a credential quoted
// by a cause (a config value, a CLI's stderr) is masked.
func (a *app) report(cmd *cobra.Command, err error) int {
	var b strings.Builder
	code := reportTo(&b, cmd, err)
	io.WriteString(a.io.Err, a.diagnostic(b.String()))
	return code
}

// diagnostic is text, a message of coagent8's own, as the terminal shows
// it: through the diagnostic redaction of the logs and security events,
// so the home directory is shown as "~" and a credential quoted by a
// cause is masked. Command output (an answer, JSON lines, the redact
// copy) is not a message and does not pass here.
func (a *app) diagnostic(text string) string {
	home := a.env.Home()
	text = redact.NewDiagnostic(home).String(text)
	// A home that is a symlink is named by its canonical path wherever a
	// path was resolved (workspaces, sandbox paths): the same directory.
	if real, rerr := filepath.EvalSymlinks(home); rerr == nil && home != "" && real != filepath.Clean(home) {
		text = redact.NewDiagnostic(real).String(text)
	}
	return text
}

// printf writes a message of coagent8's own to w, as [app.diagnostic]
// shows it (a path under the home directory as "~/…", as errors show it).
func (a *app) printf(w io.Writer, format string, args ...any) {
	io.WriteString(w, a.diagnostic(fmt.Sprintf(format, args...)))
}

func reportTo(w io.Writer, cmd *cobra.Command, err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return usage(w, cmd, ue)
	}
	if code, ok := exitstatus.Report(w, err); ok {
		return code
	}
	return usage(w, cmd, err) // cobra's own: unknown command, argument count, required flag
}

func usage(w io.Writer, cmd *cobra.Command, err error) int {
	path := "coagent8"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	var ue usageError
	if !errors.As(err, &ue) {
		ue = cobraUsage(err)
	}
	code, _ := exitstatus.Report(w, ue.fe)
	fmt.Fprintf(w, "Run '%s --help' for usage.\n", path)
	return code
}

// usageError marks bad command-line usage: an INVALID_INPUT fault with an
// args.* or flag.* reason (exit 2), printed with the help hint of the
// command at fault.
type usageError struct{ fe *fault.Error }

func (u usageError) Error() string { return u.fe.Error() }

// Unwrap is the fault, so errors.As finds it.
func (u usageError) Unwrap() error { return u.fe }

// badUsage is a usage error with reason and the message format makes.
func badUsage(reason, format string, args ...any) usageError {
	return usageError{fault.New(fault.InvalidInput, reason, fmt.Sprintf(format, args...))}
}

// flagError is a flag the parser refused. Its message is the parser's
// without the Go parser's own words: pflag reports `invalid argument
// "1e99" for "--max-minutes" flag: strconv.ParseInt: parsing "1e99": value
// out of range`; the user reads `… flag: value out of range`.
// An unknown long flag names the command's nearest flag when one is
// close (`--max-usdd`: did you mean --max-usd?).
func flagError(cmd *cobra.Command, err error) usageError {
	msg := strconvNoise.ReplaceAllString(err.Error(), "")
	reason := "flag.invalid"
	if strings.HasPrefix(msg, "unknown flag") || strings.HasPrefix(msg, "unknown shorthand flag") {
		reason = "flag.unknown"
		if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
			if s := nearestFlag(cmd, name); s != "" {
				msg += "; did you mean --" + s + "?"
			}
		}
	}
	return badUsage(reason, "%s", msg)
}

// nearestFlag is the visible flag of cmd (its own and inherited) closest
// to name within two edits (one for names of four letters or fewer), or
// "" when none is.
func nearestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", 3
	consider := func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		limit := 2
		if len(f.Name) <= 4 {
			limit = 1
		}
		if d := levenshtein.ComputeDistance(strings.ToLower(name), f.Name); d <= limit && d < bestD {
			best, bestD = f.Name, d
		}
	}
	cmd.LocalFlags().VisitAll(consider)
	cmd.InheritedFlags().VisitAll(consider)
	return best
}

var strconvNoise = regexp.MustCompile(`strconv\.Parse\w+: parsing "(?:[^"\\]|\\.)*": `)

// cobraUsage is an error cobra raised itself, outside the validators and
// the flag error function of this package (a required flag, a flag
// group), as a usage error.
func cobraUsage(err error) usageError {
	msg := err.Error()
	reason := "args.invalid"
	switch {
	case strings.HasPrefix(msg, "required flag"):
		reason = "flag.missing"
	case strings.HasPrefix(msg, "if any flags in the group"), strings.HasPrefix(msg, "at least one of the flags"):
		reason = "flag.conflict"
	}
	return badUsage(reason, "%s", msg)
}

// exitError makes the process exit with its code after printing its
// message (if any) as "coagent8: msg". It is for commands whose status
// carries meaning of its own, such as `sandbox run` passing on the
// sandboxed command's.
type exitError = exitstatus.Error

func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "coagent8",
		Short: "MCP server: consult, get a review from or delegate work to another local coding agent",
		Long: `coagent8 lets an agent in any MCP host consult, get a review from or delegate
work to another local coding agent (Claude Code, Codex, agy; agy consults
and reviews only). Consult and review run under a verified read-only
profile. A delegated agent (Linux) edits a copy of the workspace in a
sandbox whose only network is coagent8's provider gate; its patch stays
quarantined until you admit it (coagent8 admit JOB).

With no arguments it serves MCP over stdio (this is how hosts start it).`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          noArgs,
		// Every command and the server refuse a relative state directory
		// or configuration path before anything is read or made.
		PersistentPreRunE: func(*cobra.Command, []string) error { return a.env.PathErr() },
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context())
		},
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return flagError(cmd, err) })
	root.SetIn(a.io.In)
	root.SetOut(a.io.Out) // before InitDefaultCompletionCmd, which keeps the writer it sees
	root.SetErr(a.io.Err)
	for _, c := range subcommands(a) {
		root.AddCommand(c)
	}
	root.InitDefaultCompletionCmd() // now rather than at Execute, so prepare sees the completion group
	prepare(root)
	return root
}
