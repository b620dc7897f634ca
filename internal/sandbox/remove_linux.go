//go:build linux && amd64

package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// maxRemoveDepth bounds how deep removeTree opens directories to grant
// itself access (two descriptors per level); os.RemoveAll itself has no
// such bound.
const maxRemoveDepth = 256

// removeTree removes dir like os.RemoveAll, and where that fails first
// gives the owner access (u+rwx) to each directory beneath dir that we
// own, without following symlinks, then retries. A root supervisor
// removes anything; an unprivileged one could not remove a directory
// whose mode denies its owner: overlayfs makes its work directory's
// work/ and everything it puts there mode 0, and a command may chmod 000
// a directory in scratch, so os.RemoveAll failed with EACCES and the
// job root or the candidate's work directory stayed behind
// (TestUnprivilegedSupervisor).
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	grantOwner(unix.AT_FDCWD, dir, 0)
	return os.RemoveAll(dir)
}

// grantOwner adds u+rwx to the directory name (relative to parent) when
// we own it and it lacks them, then to its subdirectories. Errors are
// ignored: the retried removal reports what is left.
func grantOwner(parent int, name string, depth int) {
	if depth > maxRemoveDepth {
		return
	}
	fd, err := unix.Openat(parent, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return // not a directory, a symlink, or gone
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || int(st.Uid) != os.Geteuid() {
		return
	}
	if st.Mode&0o700 != 0o700 {
		// fchmod refuses an O_PATH descriptor; its /proc link names the
		// same inode.
		if unix.Fchmodat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), st.Mode&0o7777|0o700, 0) != nil {
			return
		}
	}
	dfd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	d := os.NewFile(uintptr(dfd), name)
	defer d.Close()
	ents, _ := d.ReadDir(-1)
	for _, e := range ents {
		if e.IsDir() {
			grantOwner(dfd, e.Name(), depth+1)
		}
	}
}

// removeWorkDirs removes the overlay work directories a run made in the
// caller's candidate directory (work/, and git-work/ for a git view)
// once its tree has ended: they hold nothing of the candidate (its
// changes are in upper/), and unprivileged their owner could not remove
// them (removeTree). The candidate directory is left with what
// [Candidate.Seeded] adopts.
func removeWorkDirs(j job) {
	if j.candidate != nil {
		_ = removeTree(j.candidate.work)
	}
	if j.git != nil && j.git.work != "" {
		_ = removeTree(j.git.work)
	}
}
