//go:build !windows

package cli

import (
	"io/fs"
	"syscall"
)

// fileOwner returns the uid owning fi's file (ok false when the platform
// does not say).
func fileOwner(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
