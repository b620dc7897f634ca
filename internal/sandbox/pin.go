package sandbox

import (
	"fmt"
	"os"
)

// maxPins bounds [AgentSpec.Pinned] (each takes one of PID 1's
// descriptors).
const maxPins = 4

// Pin binds a read-only file by the content that was checked, not by its
// path (issue 15 scope 5: the runtime's executables are digested, then
// mounted; a file renamed over the path in between — an attacker, an
// update — would otherwise run unqualified). The supervisor clones the
// file at Path as a detached mount (open_tree: the mount holds that
// inode whatever later happens to the path), opens it read-only through
// that mount and calls Check on it; only when Check returns nil is that
// same mount attached inside the sandbox at Path. A file renamed over the
// path (or removed) after the check refuses the run before it starts
// (the checked inode lost its link, below) and, were that missed, when
// PID 1 attaches the mount (SANDBOX_UNAVAILABLE sandbox.setup: the
// kernel does not attach an unlinked file's mount), so neither the
// replacement nor anything unchecked runs.
//
// A write into the same inode after Check (its owner writing in place;
// a running executable is ETXTBSY only once it runs, a script or data
// file never is) is caught by comparison: the supervisor keeps the
// checked descriptor, what statx showed of it just before Check (inode,
// link count, size, mtime and ctime to the nanosecond; ctime cannot be
// set from user space) and an inotify IN_MODIFY watch on it, and compares
// again after Check, just before PID 1 is released (a difference there
// refuses before anything runs), once the command has exec'd (the run is
// ended at once) and when the run ends. Any difference — also a link
// change, so an update renamed over the path during a run refuses that
// run — is SANDBOX_UNAVAILABLE reason "sandbox.pin_changed" naming the
// file and when it was seen ("seen" detail); after the command started
// the receipt comes with the error and lists the file in
// [Receipt.PinsChanged]. The change cookie (i_version) would be exact but
// the kernel does not report it to user space; on kernels without
// multigrain timestamps (before 6.13) a write in the same clock tick as
// the check keeps ctime, and the inotify watch is what sees it (a write
// through a shared mapping raises no inotify event but sets mtime and
// ctime).
//
// An unprivileged supervisor cannot clone host mounts: it checks the file
// through a descriptor just before the fork and PID 1 binds the path. It
// gets the same comparisons, and until the command starts also requires
// the path to still name the checked inode, so a file renamed over the
// path before the bind refuses too, after the fact; a rename there and
// back within that window is not seen.
type Pin struct {
	// Path is the canonical absolute path of a regular file that is also
	// in [Spec.ReadOnly] (typically the executable, [Spec.Path]).
	Path string
	// Check verifies f, the file that will be mounted (read it, fstat
	// it; do not close it). Its error refuses the run as returned when
	// it is a *fault.Error, else as SANDBOX_UNAVAILABLE reason
	// "sandbox.pin". Required.
	Check func(f *os.File) error
}

// admitPins matches each pin to its read-only bind (by index).
func admitPins(pins []Pin, binds []bind) ([]pinned, error) {
	if len(pins) > maxPins {
		return nil, invalid("sandbox.pin", fmt.Sprintf("at most %d pinned files", maxPins))
	}
	var out []pinned
	for _, p := range pins {
		i := -1
		for k, b := range binds {
			if b.Src == p.Path && !b.Dir {
				i = k
			}
		}
		if i < 0 || p.Check == nil {
			return nil, invalid("sandbox.pin", "a pinned file must be a read-only file of the spec and have a check: "+p.Path)
		}
		out = append(out, pinned{path: p.Path, check: p.Check, bind: i})
	}
	return out, nil
}

// pinned is an admitted [Pin]: bind is its index in job.binds.
type pinned struct {
	path  string
	check func(*os.File) error
	bind  int
}
