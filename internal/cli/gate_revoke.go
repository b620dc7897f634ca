package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
)

// newGateRevokeCmd is `coagent8 gate revoke GRANT_ID | --job JOB`
// (issue 18 scope 6): one grant, or every live grant of a job at once.
// Either way the next request is denied and streams in flight are cut,
// in a running `gate serve` within its watch interval (200 ms).
func newGateRevokeCmd(a *app) *cobra.Command {
	var job string
	c := &cobra.Command{
		Use:   "revoke GRANT_ID | --job JOB",
		Short: "Revoke a grant, or every grant of a job: deny the next request and cut their streams",
		Args:  optionalArgs("GRANT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case job != "" && len(args) == 0:
				return a.gateRevokeJob(cmd.Context(), job)
			case job == "" && len(args) == 1:
				return a.gateByID(cmd.Context(), "revoke", args[0])
			case job == "":
				return badUsage("args.missing", "missing GRANT_ID (or --job JOB for every grant of a job)")
			}
			return badUsage("args.conflict", "gate revoke takes a GRANT_ID or --job JOB, not both")
		},
	}
	c.Flags().StringVar(&job, "job", "", "revoke every live grant of this job")
	return c
}

func (a *app) gateRevokeJob(ctx context.Context, job string) error {
	g, closeFn, err := a.openGate(ctx, gate.Options{}, noForwarding)
	if err != nil {
		return err
	}
	defer closeFn()
	ids, err := g.RevokeJob(ctx, job)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		known, err := g.HasJob(ctx, job)
		if err != nil {
			return err
		}
		if !known {
			// A mistyped id must not look like containment happened.
			return fault.New(fault.InvalidInput, "gate.unknown_job", fmt.Sprintf(
				"no grant names the job %s: nothing was revoked; check the job id (the --job given to gate grant, shown by gate inspect; coagent8 jobs lists delegate jobs)", fault.QuoteInput(job))).With("job", job)
		}
		ids = []string{}
	}
	return a.printJSON(struct {
		Job     string   `json:"job"`
		Revoked []string `json:"revoked"`
	}{job, ids})
}
