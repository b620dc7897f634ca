//go:build linux

package delegation

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// fileKey identifies a file's current content without reading it: any
// write changes its mtime and ctime (a rename or replacement its inode).
func fileKey(p string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d:%d:%d:%d.%d:%d.%d", st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec), nil
}
