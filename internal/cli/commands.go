package cli

import "github.com/spf13/cobra"

// subcommands lists every subcommand. Add one line per new command file.
func subcommands(a *app) []*cobra.Command {
	return []*cobra.Command{
		newServeCmd(a),
		newConsultCmd(a),
		newDoctorCmd(a),
		newGateCmd(a),
		newGovernanceCmd(a),
		newPricesCmd(a),
		newRedactCmd(a),
		newSandboxCmd(a),
		newAuditCmd(a),
		newOperatorCmd(a),
		newJobsCmd(a),
		newAdmitCmd(a),
		newRejectCmd(a),
		newQuarantineCmd(a),
		newDelegateCmd(a),
		newVersionCmd(a),
	}
}
