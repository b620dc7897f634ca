//go:build !windows

package operator

import (
	"fmt"
	"os"

	"github.com/coagent8/coagent8/internal/fault"
)

// checkPrivate refuses a credential file that group or others can access.
func checkPrivate(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat operator credential: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fault.New(fault.InvalidInput, "operator.credential_mode",
			fmt.Sprintf("the operator credential file has mode %v; want 0600 (chmod 600 it)", st.Mode().Perm()))
	}
	return nil
}
