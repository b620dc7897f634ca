//go:build !unix

package admission

import (
	"errors"
	"os"
)

// lockPending is unavailable here; admission refuses (it cannot be atomic
// either, see sameDevice) and recovery leaves every entry alone.
func lockPending(string) (*os.File, bool, error) { return nil, false, errors.ErrUnsupported }
