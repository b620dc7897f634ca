package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/price"
	"github.com/coagent8/coagent8/internal/redact"
)

// newPricesCmd is `coagent8 prices show|refresh` (issue 5): the model price
// catalog governance uses. Prices are approximate public API prices
// (OpenRouter) used only to decide whether to ask.
func newPricesCmd(a *app) *cobra.Command {
	c := &cobra.Command{Use: "prices", Short: "Show, refresh or reset the approximate model price catalog (OpenRouter)"}
	c.AddCommand(newPricesShowCmd(a), newPricesRefreshCmd(a), newPricesResetCmd(a))
	return c
}

// newPricesResetCmd is `coagent8 prices reset`: back to the embedded
// snapshot. A refresh replaces the whole catalog, so without it a list
// from the wrong --url (one model) left every other model unpriced with
// no way back but deleting a file by hand (newcomer report).
func newPricesResetCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "reset",
		Short: "Remove the refreshed price cache and use the embedded snapshot again",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := price.CachePath(a.env.StateDir())
			err := os.Remove(path)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fault.Wrap(fault.ProcessError, "prices.cache_write", "could not remove the price cache "+path, err)
			}
			e := price.Embedded().Source()
			if err != nil {
				fmt.Fprintf(a.io.Out, "No refreshed price cache; the embedded snapshot dated %s is in use.\n", e.Date.Format(time.DateOnly))
				return nil
			}
			fmt.Fprintf(a.io.Out, "Removed %s; the embedded snapshot dated %s is in use.\n", path, e.Date.Format(time.DateOnly))
			return nil
		},
	}
}

func newPricesRefreshCmd(a *app) *cobra.Command {
	var from string
	c := &cobra.Command{
		Use:   "refresh",
		Short: "Fetch OpenRouter's model list and cache it with its date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.pricesRefresh(cmd, from)
		},
	}
	c.Flags().StringVar(&from, "url", price.DefaultURL, "model list URL (OpenRouter /api/v1/models format)")
	return c
}

func (a *app) pricesRefresh(cmd *cobra.Command, from string) error {
	if u, err := url.Parse(from); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return badUsage("flag.invalid", "--url must be an http(s) URL")
	}
	client := &http.Client{Timeout: 60 * time.Second}
	c, err := price.Refresh(cmd.Context(), client, from)
	if err != nil {
		why := refreshCause(err, redact.NewDiagnostic(a.env.Home()))
		return fault.Wrap(fault.ProcessError, "prices.refresh_failed",
			"could not refresh the price list: "+why+"; the previous catalog stays in use", err).WithRetry()
	}
	path := price.CachePath(a.env.StateDir())
	if err := c.Save(path); err != nil {
		return fault.Wrap(fault.ProcessError, "prices.cache_write", "could not write the price cache", err)
	}
	fmt.Fprintf(a.io.Out, "Cached %d priced models from %s (fetched %s).\n",
		len(c.IDs()), from, c.Source().Date.Format(time.RFC3339))
	return nil
}

func newPricesShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show",
		Short: "Show the price source, its date, the governance limits and the prices",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, st := price.Load(price.CachePath(a.env.StateDir()))
			writePriceStatus(a.io.Out, st)
			writeLimits(a.io.Out, a.env)
			// The run id comes first: it is what `governance allow` takes
			// (an allow rule matches it exactly), not the list's own id.
			fmt.Fprintln(a.io.Out, "Models: the id the backend CLI runs (use it with coagent8 governance), the price list's id, the output price:")
			for _, p := range c.IDs() {
				fmt.Fprintf(a.io.Out, "  %-32s %-40s %10s USD/M output\n", p.RunID, p.ID, p.PerMillion.FloatString(2))
			}
			return nil
		},
	}
}

func writePriceStatus(w io.Writer, st price.Status) {
	fmt.Fprintf(w, "Price source: %s (%s), dated %s, %d priced ids. Approximate public API prices; not billing.\n",
		st.Source.Kind, st.Source.URL, st.Source.Date.Format(time.DateOnly), st.Models)
	if st.Source.Note != "" {
		fmt.Fprintf(w, "Note: %s\n", st.Source.Note)
	}
	if st.Source.Unpriced != "" {
		fmt.Fprintf(w, "Unpriced: %s\n", st.Source.Unpriced)
	}
	if st.Warning != "" {
		fmt.Fprintf(w, "Warning: %s\n", st.Warning)
	}
}

func writeLimits(w io.Writer, env config.Env) {
	f, _ := env.Load()
	if err := f.GovernanceErr(); err != nil {
		fmt.Fprintf(w, "Governance: INVALID, %s\n", fault.From(err).Message) // the message begins "turns are refused"
		return
	}
	fmt.Fprintf(w, "Governance limits: askAbovePrice %s USD per million output tokens, priceMultiplier %s\n",
		f.Governance.AskAbovePrice().FloatString(2), f.Governance.PriceMultiplier().FloatString(2))
}
