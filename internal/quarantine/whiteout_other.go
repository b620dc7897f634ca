//go:build !linux

package quarantine

import (
	"errors"
	"os"
)

// whiteout is Linux-only: a candidate (an overlayfs view) exists only
// there.
func whiteout(*os.Root, string) error {
	return errors.New("a candidate whiteout needs Linux overlayfs")
}
