package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/admission"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/job"
)

// newQuarantineCmd is `coagent8 quarantine JOB` (issue 16 scope 7): the
// one compromise response. It revokes every grant of the job in the gate
// (a running `gate serve` cuts their streams within its watch interval),
// taints the job, its candidate and artifacts with bounded secret-free
// evidence, and records a security event. Admission then needs
// `coagent8 admit JOB --ack tainted`. It runs under the job's admission
// lock (admission.Admitter.Quarantine): it waits for an admission of the
// job in progress instead of landing between its last check and its
// commit point.
//
// The terminal holds no handle on a running job's process tree (its
// supervisor is another coagent8 process): the result says so
// (tree_ended false); with its grants revoked the tree has no network.
func newQuarantineCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "quarantine JOB",
		Short: "Compromise response: revoke every grant of a delegate job and taint its candidate (admission then needs --ack tainted)",
		Args:  wantArgs("JOB"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.quarantine(cmd.Context(), args[0])
		},
	}
}

func (a *app) quarantine(ctx context.Context, id string) error {
	g, closeGate, err := a.openGate(ctx, gate.Options{}, noForwarding)
	if err != nil {
		return err
	}
	defer closeGate()
	return a.withJobs(ctx, func(_ *job.Store, adm *admission.Admitter) error {
		events, closeEvents := a.eventSink(a.logger())
		defer closeEvents()
		// The same one action as a containment event during a job
		// (governor's finishJob): Quarantine records the security event.
		ev, err := adm.Quarantine(ctx, id, job.Containment{Revoker: g, Trigger: "operator", Actor: terminalActor(), Events: events})
		if err != nil {
			return err
		}
		return a.printJSON(struct {
			Job      string       `json:"job"`
			State    string       `json:"state"`
			Evidence job.Evidence `json:"evidence"`
		}{id, job.Tainted.String(), ev})
	})
}
