package cli

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/fault"
)

// prepare walks the command tree once it is built:
//   - a group (a command with subcommands and nothing to run of its own)
//     prints its help when called bare and refuses anything else as an
//     unknown command; cobra alone would print the help and exit 0 for
//     `coagent8 prices bogus`, hiding the typo from scripts;
//   - a command without subcommands that declares cobra.NoArgs gets
//     [takesNoArgs]: its extra argument is not an unknown command;
//   - every RunE is wrapped so that a plain error it returns is the generic
//     internal fault, never mistaken for cobra's own usage errors by
//     [app.report] (see the package doc).
func prepare(c *cobra.Command) {
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = noArgs
		c.DisableFlagsInUseLine = true
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	if !c.HasSubCommands() && isCobraNoArgs(c.Args) {
		c.Args = takesNoArgs
	}
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error { return commandError(run(cmd, args)) }
	}
	for _, sub := range c.Commands() {
		prepare(sub)
	}
}

// commandError keeps the error types [app.report] distinguishes and turns
// anything else into the generic internal fault.
func commandError(err error) error {
	var ue usageError
	var xe exitError
	var fe *fault.Error
	if err == nil || errors.As(err, &ue) || errors.As(err, &xe) || errors.As(err, &fe) {
		return err
	}
	return fault.From(err)
}

// noArgs is cobra.NoArgs with a hint: an argument that names a flag of
// the command suggests the flag, else close subcommand names are
// suggested (`coagent8 versoin`: did you mean version?).
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	const reason = "args.unknown_command"
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if err := flagHint(cmd, args[0], reason, msg); err != nil {
		return err
	}
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, applied only on its own path
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		return badUsage(reason, "%s; did you mean %s?", msg, strings.Join(s, " or "))
	}
	return badUsage(reason, "%s", msg)
}

// isCobraNoArgs reports whether args is cobra.NoArgs (functions compare
// only by their code pointer).
func isCobraNoArgs(args cobra.PositionalArgs) bool {
	return args != nil && reflect.ValueOf(args).Pointer() == reflect.ValueOf(cobra.NoArgs).Pointer()
}

// takesNoArgs refuses any argument to a command without subcommands,
// naming it: `coagent8 doctor extra` is an extra argument, not an unknown
// command (cobra.NoArgs says "unknown command"). An argument that names
// a flag of the command suggests the flag.
func takesNoArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s takes no arguments (got %s)", commandName(cmd), quoteArgs(args))
	if err := flagHint(cmd, args[0], "args.extra", msg); err != nil {
		return err
	}
	return badUsage("args.extra", "%s", msg)
}

// flagHint is the usage error msg (with reason) suggesting the flag when
// arg names one of cmd's flags without its dashes (`doctor json`: did you
// mean --json?), else nil.
func flagHint(cmd *cobra.Command, arg, reason, msg string) error {
	if f := cmd.Flags().Lookup(arg); f != nil {
		return badUsage(reason, "%s; did you mean --%s?", msg, f.Name)
	}
	return nil
}

// commandName is cmd's path without the program's name ("gate serve").
func commandName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// quoteArgs names args for a message: the first, quoted and bounded
// (they are the user's input), and how many more there are.
func quoteArgs(args []string) string {
	q := fault.QuoteInput(args[0])
	if len(args) > 1 {
		q += fmt.Sprintf(" and %d more", len(args)-1)
	}
	return q
}

// wantArgs accepts exactly the named positional arguments and says which
// one is missing or that there are too many (cobra.ExactArgs only counts).
func wantArgs(names ...string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) < len(names) {
			return badUsage("args.missing", "missing %s", names[len(args)])
		}
		return tooManyArgs(names, args)
	}
}

// optionalArgs accepts at most the named positional arguments (`jobs
// [JOB]`) and names the first one too many (cobra.MaximumNArgs only
// counts).
func optionalArgs(names ...string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error { return tooManyArgs(names, args) }
}

// tooManyArgs refuses args beyond names, naming the first extra one.
func tooManyArgs(names, args []string) error {
	if len(args) <= len(names) {
		return nil
	}
	return badUsage("args.extra", "too many arguments: want %s, got %d (extra %s; quote an argument that contains spaces)",
		strings.Join(names, " "), len(args), quoteArgs(args[len(names):]))
}
