//go:build linux && amd64

package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// maxGrantDepth bounds how deep grantOwner opens directories (one
// descriptor per level, as os.RemoveAll holds). It must not be lower
// than what a command can nest: os.RemoveAll has no bound, and a mode-000
// directory below the grant's reach kept an unprivileged supervisor from
// removing the job root for good (TestGrantOwnerDeep). A descriptor
// limit reached first ends the grant there, as it ends os.RemoveAll.
const maxGrantDepth = 1 << 16

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
	grantOwner(unix.AT_FDCWD, dir, 0, 0)
	return os.RemoveAll(dir)
}

// grantOwner adds u+rwx to the directory name (relative to parent) and
// to each directory beneath it, and fileBits to each regular file
// beneath it, where we own the entry and it lacks them. It never follows
// a symlink (entries are stat'ed with AT_SYMLINK_NOFOLLOW, opened with
// O_NOFOLLOW, changed through the opened descriptor). Errors are
// ignored: what cannot be changed stays as it was, and the caller's next
// step (a removal, candidate.Changes) reports it.
func grantOwner(parent int, name string, depth int, fileBits uint32) {
	if depth > maxGrantDepth {
		return
	}
	fd, err := unix.Openat(parent, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return // not a directory, a symlink, or gone
	}
	if !addBits(fd, unix.S_IFDIR, 0o700) {
		unix.Close(fd)
		return
	}
	dfd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	unix.Close(fd) // dfd is the same directory: one descriptor per level
	if err != nil {
		return
	}
	d := os.NewFile(uintptr(dfd), name)
	defer d.Close()
	ents, _ := d.ReadDir(-1)
	for _, e := range ents {
		switch {
		case e.IsDir():
			grantOwner(dfd, e.Name(), depth+1, fileBits)
		case e.Type().IsRegular() && fileBits != 0:
			grantFile(dfd, e.Name(), fileBits)
		}
	}
}

// grantFile adds bits to the regular file name below dfd when we own it
// and it lacks them.
func grantFile(dfd int, name string, bits uint32) {
	var st unix.Stat_t
	if unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&bits == bits {
		return // the common case: one stat, nothing to change
	}
	fd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	addBits(fd, unix.S_IFREG, bits)
}

// addBits adds bits to the mode of the file open at fd (O_PATH) when it
// is of type typ and ours; it reports whether the file is of that type,
// ours, and has the bits now.
func addBits(fd int, typ, bits uint32) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != typ || int(st.Uid) != os.Geteuid() {
		return false
	}
	if st.Mode&bits == bits {
		return true
	}
	// fchmod refuses an O_PATH descriptor; its /proc link names the same
	// inode, whatever now sits at the path.
	return unix.Fchmodat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), st.Mode&0o7777|bits, 0) == nil
}

// finishCandidate runs once a candidate run's tree has ended. It removes
// the overlay work directories the run made in the caller's candidate
// directory (work/, and git-work/ for a git view): they hold nothing of
// the candidate (its changes are in upper/), and unprivileged their owner
// could not remove them (removeTree); the candidate directory is left
// with what [Candidate.Seeded] adopts. Under an unprivileged supervisor
// it also gives the owner u+rwx on every directory and u+r on every
// regular file of upper/: the command (namespace root) could make one
// mode 000, which candidate.Changes, running as the same uid without
// the namespace's capabilities, then could not open, and the whole job's
// changes were lost (PROCESS_ERROR candidate.read). A root supervisor
// reads such entries anyway, and the patch carries only a file's
// executable bit, so the result is the same as a root supervisor's.
func finishCandidate(j job) {
	if j.candidate != nil {
		_ = removeTree(j.candidate.work)
		if os.Geteuid() != 0 {
			grantOwner(unix.AT_FDCWD, j.candidate.upper, 0, 0o400)
		}
	}
	if j.git != nil && j.git.work != "" {
		_ = removeTree(j.git.work)
		if os.Geteuid() != 0 {
			// Nothing reads the git layer's files; its directories must
			// not keep the caller from removing the candidate directory.
			grantOwner(unix.AT_FDCWD, j.git.upper, 0, 0)
		}
	}
}
