//go:build unix

package admission

import (
	"os"
	"syscall"
)

// sameDevice reports whether a and b are on one file system, so a rename
// between them is atomic.
func sameDevice(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	if err1 != nil || err2 != nil {
		return false
	}
	x, ok1 := sa.Sys().(*syscall.Stat_t)
	y, ok2 := sb.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && x.Dev == y.Dev
}
