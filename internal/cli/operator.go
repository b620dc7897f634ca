package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/admission"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/operator"
	"github.com/coagent8/coagent8/internal/store"
)

// newOperatorCmd is `coagent8 operator` (issue 17): the local operator
// dashboard on loopback, and `operator credential` to show its credential
// again.
func newOperatorCmd(a *app) *cobra.Command {
	var port int
	var address string
	c := &cobra.Command{
		Use:   "operator",
		Short: "Serve the local operator dashboard on 127.0.0.1 (jobs, budgets, decisions, events, sessions)",
		Long: `Serve the local operator dashboard: a web page on loopback that shows the
host's sandbox qualification, backends and governance, jobs with their gate
counters, grants and budgets, egress decisions and refusals, security events
and the sessions of each workspace, updated live.

It listens only on 127.0.0.1 or [::1] (--address); any other address is
refused and no option widens it. Every request needs the dashboard's own
HTTP Basic credential (user "operator"), generated on first start, stored
0600 as operator.credential in the state directory and printed once;
'coagent8 operator credential' prints it again. Actions that would stop or
restart a coagent8 component are refused (LIFECYCLE_UNAVAILABLE).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.operator(cmd.Context(), address, port)
		},
	}
	c.Flags().IntVar(&port, "port", operator.DefaultPort, "TCP port (0 picks a free one)")
	c.Flags().StringVar(&address, "address", "127.0.0.1", "loopback address to listen on: 127.0.0.1 or ::1")
	c.AddCommand(newOperatorCredentialCmd(a))
	return c
}

func newOperatorCredentialCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "credential",
		Short: "Print the operator dashboard's credential (user and password)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := operator.ReadCredential(a.env.StateDir())
			if errors.Is(err, fs.ErrNotExist) {
				return fault.New(fault.InvalidInput, "operator.no_credential",
					"no operator credential yet: 'coagent8 operator' generates one on its first start")
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.io.Out, "user: %s\npassword: %s\n", operator.User, c.Password().Reveal())
			return nil
		},
	}
}

func (a *app) operator(ctx context.Context, address string, port int) error {
	if port < 0 || port > 65535 {
		return badUsage("flag.invalid", "--port %d: use 0 to 65535", port)
	}
	ln, err := operator.Listen(net.JoinHostPort(address, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer ln.Close()
	cred, created, err := operator.LoadOrCreateCredential(a.env.StateDir())
	if err != nil {
		return err
	}
	log := a.logger()
	events, closeEvents := a.eventSink(log)
	defer closeEvents()
	cands, closeCands, err := a.operatorCandidates(ctx, events)
	if err != nil {
		return err
	}
	defer closeCands()
	srv, err := operator.New(ctx, operator.Options{StateDir: a.env.StateDir(), Home: a.env.Home(), Credential: cred,
		Events: events, Doctor: a.operatorDoctor(), Candidates: cands, Logger: log})
	if err != nil {
		return err
	}
	defer srv.Close()
	if created {
		fmt.Fprintf(a.io.Err, "coagent8: generated the operator credential (shown once; 'coagent8 operator credential' shows it again)\n  user: %s\n  password: %s\n",
			operator.User, cred.Password().Reveal())
	}
	ap := netip.MustParseAddrPort(ln.Addr().String()) // operator.Listen bound a literal loopback address
	fmt.Fprintf(a.io.Out, "coagent8 operator: %s (user %s; Ctrl-C stops)\n", operator.URL(ap), operator.User)
	return srv.Serve(ctx, ln)
}

// operatorCandidates opens the job store and the admitter the dashboard
// admits through (the same as `coagent8 admit`; opening them fails jobs
// whose supervisor died and finishes an interrupted admission).
func (a *app) operatorCandidates(ctx context.Context, events event.Sink) (operator.Candidates, func(), error) {
	path := filepath.Join(a.env.StateDir(), "state.db")
	db, err := store.OpenOptions(ctx, path, store.Options{Busy: sessionBusy, CacheKiB: operator.CacheKiB})
	if err != nil {
		return nil, nil, a.startError(path, err)
	}
	// No idle connection: each keeps its own SQLite page cache (the
	// integrity check at open fills one), and the dashboard reads jobs
	// rarely; an idle dashboard then holds only its own connection's
	// cache (issue 17: idle RSS).
	db.SQL().SetMaxIdleConns(0)
	jobs, err := job.Open(ctx, db)
	if err == nil {
		var adm *admission.Admitter
		if adm, err = admission.New(ctx, admission.Options{Jobs: jobs, Env: a.env, StateDir: a.env.StateDir(), Events: events}); err == nil {
			return operator.NewJobCandidates(jobs, adm), func() { db.Close() }, nil
		}
	}
	db.Close()
	return nil, nil, a.startError(path, err)
}
