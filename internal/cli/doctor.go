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
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.build(cmd.Context())
			if err != nil {
				return err
			}
			defer st.close()
			b, _ := json.MarshalIndent(st.server.Doctor(cmd.Context()), "", "  ")
			fmt.Fprintln(a.io.Out, string(b))
			return nil
		},
	}
}
