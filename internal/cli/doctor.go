package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
)

func newDoctorCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Report backends, versions, login state and verified profiles (never sends a prompt)",
		Long: `Report backends, versions, login state and verified profiles as JSON. It
never sends a prompt.

doctor reports and does not judge: it exits 0 whenever the report was
made. Readiness is in the "status" field: operational (every backend
ready), partially_configured (some ready) or degraded_no_active_backends
(none ready; "recommendations" says what each installed backend lacks).
"ready_backends" lists the backends a turn can use now. "sections" shows
the governance in force and the task sandbox's readiness (kernel
capabilities, and whether this binary is qualified on this host).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.build(cmd.Context())
			if err != nil {
				return err
			}
			defer st.close()
			srv, err := a.mcpServer(st)
			if err != nil {
				return err
			}
			b, _ := json.MarshalIndent(srv.Doctor(cmd.Context()), "", "  ")
			fmt.Fprintln(a.io.Out, string(b))
			return nil
		},
	}
}
