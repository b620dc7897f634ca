package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
	"github.com/coagent8/coagent8/internal/price"
)

// ruleMeaning says what each list does, for help and confirmations.
var ruleMeaning = map[string]string{
	"allow": "runs without asking",
	"ask":   "is asked about on every turn, whatever it costs",
	"deny":  "never runs (POLICY_DENIED)",
}

// newGovernanceCmd is `coagent8 governance allow|ask|deny MODEL` and
// `coagent8 governance show` (issue 19 item 9): the user's own model rules
// in config.json, edited from a terminal. There is no MCP tool for this on
// purpose: only the user changes governance, never a calling agent.
func newGovernanceCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "governance",
		Short: "Show or edit your model rules (allow, ask, deny) in the coagent8 configuration",
		Long: `Show or edit governance.models in the coagent8 configuration
($COAGENT8_CONFIG if set, else $COAGENT8_DIR/config.json, else
~/.coagent8/config.json).

A model on deny never runs; on ask it is asked about on every turn; on
allow it runs without asking. deny beats ask beats allow, and a rule for
an id covers its effort variants. A model on no list runs without asking
only when its price is known exactly and below the limits (see
"coagent8 prices show"); otherwise it is asked about, and a terminal,
which cannot ask, refuses it until you allow it here.

Each edit puts the model on exactly one list (taking it off the other
two), keeps every other setting of the file, and replaces the file
atomically with the same permissions. A calling agent has no tool for
this: only you change these rules.`,
		Args: cobra.NoArgs,
	}
	for _, list := range config.RuleLists {
		c.AddCommand(newGovernanceRuleCmd(a, list))
	}
	c.AddCommand(newGovernanceShowCmd(a))
	return c
}

func newGovernanceRuleCmd(a *app, list string) *cobra.Command {
	var unlisted bool
	c := &cobra.Command{
		Use:   list + " MODEL",
		Short: "Put MODEL on governance.models." + list + ": it " + ruleMeaning[list],
		Long: "Put MODEL (the concrete id the backend runs, as coagent8's refusal or\n" +
			"doctor names it, e.g. claude-sonnet-5-5 or gpt-6.1-sol) on\n" +
			"governance.models." + list + " and off the other lists: it " + ruleMeaning[list] + ".\n\n" +
			"MODEL must be a model coagent8 knows (its price list, unpriced ones\n" +
			"included, or a rule you already have), else it is refused with the\n" +
			"nearest known id: a misspelt rule would never apply. --unlisted takes\n" +
			"a model newer than the price list. An allow rule matches only the\n" +
			"exact id the backend runs, so allow refuses another spelling of it\n" +
			"(the price list's anthropic/claude-sonnet-5.5 for claude-sonnet-5-5),\n" +
			"naming the id to use; deny and ask also cover other spellings.",
		Example: "  coagent8 governance " + list + " claude-sonnet-5-5",
		Args:    wantArgs("MODEL"),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.governanceRule(list, args[0], unlisted)
		},
	}
	c.Flags().BoolVar(&unlisted, "unlisted", false, "accept MODEL although coagent8 does not know it (a model newer than the price list)")
	return c
}

// governanceRule applies `governance LIST MODEL`; unless unlisted, MODEL
// must be a known model, and on allow it must be the id a backend runs.
func (a *app) governanceRule(list, model string, unlisted bool) error {
	// An invalid id is SetModelRule's refusal (model.invalid), not "unknown".
	if policy.ValidID(model) {
		k := a.knownModels()
		run := k.runID(model)
		if !unlisted && !k.knows(model) && !k.knows(run) {
			return usageError{unknownModel(model, k)}
		}
		if list == "allow" && !strings.EqualFold(run, model) {
			return usageError{misspeltAllow(model, run, unlisted)}
		}
	}
	path := a.env.ConfigPath()
	changed, err := config.SetModelRule(path, list, model)
	var fe *fault.Error
	if errors.As(err, &fe) && fe.Code == fault.InvalidInput {
		return usageError{fe}
	}
	if err != nil {
		return fault.Wrap(fault.ProcessError, "governance.write_failed",
			"could not edit "+path+": "+err.Error()+"; the file was not changed", err)
	}
	verb := "now"
	if !changed {
		verb = "already"
	}
	a.printf(a.io.Out, "%s: governance.models.%s %s lists %s: it %s.\n", path, list, verb, model, ruleMeaning[list])
	if f, _ := a.env.Load(); f.GovernanceErr() != nil {
		a.printf(a.io.Out, "Warning: turns are still refused: %s\n", fault.From(f.GovernanceErr()).Message)
	}
	return nil
}

func newGovernanceShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show",
		Short: "Show the configuration file, your model rules, the price limits and the price source",
		Long: `Show the configuration file, your model rules, the price limits and the
price source. It exits 1 when the configuration refuses turns (the
output says why; stderr names the reason), so a script can tell.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			var b strings.Builder
			refusal := a.governanceShow(&b)
			io.WriteString(a.io.Out, a.diagnostic(b.String()))
			return showStatus(refusal)
		},
	}
}

// showStatus is the status of `governance show` whose configuration
// refuses turns with refusal (nil = usable): exit 1, not the refusal's own
// 3, since show itself ran and was not refused; stderr names the reason,
// which the report on stdout does not.
func showStatus(refusal error) error {
	if refusal == nil {
		return nil
	}
	return exitError{Code: ExitFailure, Msg: "the configuration refuses turns (reason: " + fault.From(refusal).Reason + ")"}
}

// governanceShow writes the report to w and returns the configuration's
// refusal of turns, nil when governance is usable.
func (a *app) governanceShow(w io.Writer) error {
	path := a.env.ConfigPath()
	state := "exists"
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		state = "does not exist; the defaults apply"
		if a.env.ConfigExplicit() {
			state = "does not exist (named by COAGENT8_CONFIG)"
		}
	}
	fmt.Fprintf(w, "Configuration: %s (%s)\n", path, state)
	f, _ := a.env.Load()
	if err := f.GovernanceErr(); err != nil {
		// The message itself begins "turns are refused ...": said once.
		fmt.Fprintf(w, "Governance: INVALID, %s\n", fault.From(err).Message)
	} else {
		allow, ask, deny := f.Governance.Lists()
		for _, l := range []struct {
			name string
			ids  []string
		}{{"deny", deny}, {"ask", ask}, {"allow", allow}} {
			fmt.Fprintf(w, "  %-5s %s\n", l.name, listText(l.ids))
		}
		writeMisspeltAllow(w, allow, a.knownModels())
		fmt.Fprintf(w, "Limits: askAbovePrice %s USD per million output tokens, priceMultiplier %s x the backend default's price\n",
			f.Governance.AskAbovePrice().FloatString(2), f.Governance.PriceMultiplier().FloatString(2))
	}
	_, st := price.Load(price.CachePath(a.env.StateDir()))
	writePriceStatus(w, st)
	fmt.Fprintln(w, "Edit: coagent8 governance allow|ask|deny MODEL")
	return f.GovernanceErr()
}

// writeMisspeltAllow warns of each allow rule that is not the id a backend
// runs (written by hand, or before `governance allow` refused other
// spellings): it never applies, so the model is still asked about.
func writeMisspeltAllow(w io.Writer, allow []string, k knownModels) {
	for _, id := range allow {
		run := k.runID(id)
		if strings.EqualFold(run, id) {
			continue
		}
		cmd := "coagent8 governance allow " + run
		if !k.knows(run) {
			cmd += " --unlisted"
		}
		fmt.Fprintf(w, "Warning: the allow rule %s never applies: the backend runs %s (`%s`)\n", id, run, cmd)
	}
}

func listText(ids []string) string {
	if len(ids) == 0 {
		return "(none)"
	}
	return strings.Join(ids, ", ")
}
