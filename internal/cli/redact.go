package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
)

// newRedactCmd is `coagent8 redact [--profile answer|diagnostic]`: a
// streaming filter from stdin to stdout (issue 4 §4). Output is emitted as
// it is decided; only a possible credential prefix is held back.
func newRedactCmd(a *app) *cobra.Command {
	var profile string
	cmd := &cobra.Command{
		Use:   "redact",
		Short: "Copy stdin to stdout with credentials replaced by [REDACTED:<kind>]",
		Long: `Copy standard input to standard output, replacing credentials.

--profile answer (default) replaces recognised credential formats only and
leaves everything else byte-identical. --profile diagnostic also replaces
keyword assignments (password: x, token=x), HTTP Basic and URL credentials,
and rewrites the home directory to ~.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := redactorFor(profile, a.env.Home())
			if err != nil {
				return err
			}
			return filter(r, a.io.Out, a.io.In)
		},
	}
	cmd.Flags().StringVar(&profile, "profile", "answer", "redaction profile: answer or diagnostic")
	return cmd
}

func redactorFor(profile, home string) (*redact.Redactor, error) {
	switch profile {
	case "answer":
		return redact.NewAnswer(), nil
	case "diagnostic":
		return redact.NewDiagnostic(home), nil
	}
	return nil, fault.New(fault.InvalidInput, "redact.profile",
		fmt.Sprintf(`unknown --profile %s: want "answer" or "diagnostic"`, fault.QuoteInput(profile)))
}

// filter copies in to out through r; io.Copy hands over each read as it
// arrives, so the filter streams.
func filter(r *redact.Redactor, out io.Writer, in io.Reader) error {
	w := r.Writer(out)
	if _, err := io.Copy(w, in); err != nil {
		w.Close()
		return fault.Wrap(fault.ProcessError, "redact.copy", "redact: copying stdin to stdout failed", err)
	}
	if err := w.Close(); err != nil {
		return fault.Wrap(fault.ProcessError, "redact.write", "redact: writing stdout failed", err)
	}
	return nil
}
