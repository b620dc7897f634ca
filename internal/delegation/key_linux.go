//go:build linux

package delegation

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// fileKey identifies a file's current content without reading it: any
// write changes its mtime and ctime (a rename or replacement its inode).
func fileKey(p string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return "", err
	}
	return statKey(&st), nil
}

// fdKey is fileKey of an open file.
func fdKey(f *os.File) (string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return "", err
	}
	return statKey(&st), nil
}

func statKey(st *unix.Stat_t) string {
	return fmt.Sprintf("%d:%d:%d:%d.%d:%d.%d", st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}

// oNoFollow opens a file without following a final symlink.
const oNoFollow = unix.O_NOFOLLOW
