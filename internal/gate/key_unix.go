//go:build !windows

package gate

import (
	"fmt"
	"os"
)

// checkPrivate refuses a key file that group or others can access.
func checkPrivate(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat gate key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("gate key %s has mode %v; want 0600", path, st.Mode().Perm())
	}
	return nil
}
