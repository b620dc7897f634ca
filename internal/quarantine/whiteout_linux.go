package quarantine

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// whiteout makes p (relative to root) an overlayfs whiteout: a character
// device 0:0, which hides the lower layer's entry of that name. Linux
// lets an unprivileged user make one (no CAP_MKNOD for 0:0, since 5.8).
func whiteout(root *os.Root, p string) error {
	dir, err := root.Open(filepath.Dir(p))
	if err != nil {
		return err
	}
	defer dir.Close()
	return unix.Mknodat(int(dir.Fd()), filepath.Base(p), unix.S_IFCHR|0o600, 0)
}
