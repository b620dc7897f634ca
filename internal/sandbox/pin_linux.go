//go:build linux && amd64

package sandbox

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// testOnlyAfterPin, when set, runs after each pin's check and before the
// fork: a test replaces the file at the path there, as an update racing
// the run would, or writes into it in place.
var testOnlyAfterPin func(path string)

// testOnlyPinByPath makes a root supervisor pin as an unprivileged one
// does (check through a descriptor, PID 1 binds the path), so the real
// kernel tests cover that path too.
var testOnlyPinByPath bool

// pinTrees clones each pinned file as a detached mount (not following a
// final symlink), checks it through that mount and returns the mounts,
// in order, for PID 1 to attach, and the watch that keeps the checked
// descriptors (closed with the run). On an error every mount and
// descriptor is closed.
//
// An unprivileged supervisor may not clone a mount of the host's mount
// namespace (open_tree: EPERM), and PID 1 cannot clone one it inherited
// (EINVAL: not its namespace): there each file is checked through a
// descriptor opened without following symlinks, just before the fork,
// and PID 1 binds the path (no symlinks) as for any read-only path — a
// narrower window than a check by path, not a closed one (documented).
// The watch is the same on both paths.
func pinTrees(pins []pinned) ([]*os.File, *pinWatch, error) {
	if os.Geteuid() != 0 || testOnlyPinByPath {
		w, err := checkByDescriptor(pins)
		return nil, w, err
	}
	var trees []*os.File
	w := &pinWatch{}
	fail := func(err error) ([]*os.File, *pinWatch, error) {
		for _, t := range trees {
			t.Close()
		}
		w.close()
		return nil, nil, err
	}
	for _, p := range pins {
		fd, err := unix.OpenTree(unix.AT_FDCWD, p.path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			return fail(unavailable("pin", "a clone of the pinned file "+p.path+" (open_tree)", err))
		}
		tree := os.NewFile(uintptr(fd), "pin")
		trees = append(trees, tree)
		f, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", fd), os.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fail(unavailable("pin", "the pinned file "+p.path+", opened through its mount", err))
		}
		if err := w.check(p, f); err != nil {
			return fail(err)
		}
		if testOnlyAfterPin != nil {
			testOnlyAfterPin(p.path)
		}
	}
	return trees, w, nil
}

// checkByDescriptor is the unprivileged supervisor's check (pinTrees).
func checkByDescriptor(pins []pinned) (*pinWatch, error) {
	w := &pinWatch{byPath: true}
	for _, p := range pins {
		f, err := os.OpenFile(p.path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			w.close()
			return nil, unavailable("pin", "the pinned file "+p.path+", opened without symlinks", err)
		}
		if err := w.check(p, f); err != nil {
			w.close()
			return nil, err
		}
		if testOnlyAfterPin != nil {
			testOnlyAfterPin(p.path)
		}
	}
	return w, nil
}

// checkFile runs the pin's check on f, a regular file.
func checkFile(p pinned, f *os.File) error {
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return unavailable("pin", "a regular pinned file "+p.path, err)
	}
	err := p.check(f)
	var fe *fault.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return err
	}
	return fault.Wrap(fault.SandboxUnavailable, "sandbox.pin", "the pinned file "+p.path+" failed its check", err)
}

// attachPinned plans the pinned file's mount (descriptor fd in PID 1) at
// root+dst, read-only. The kernel refuses (ENOENT) to attach a mount
// whose file was unlinked since the clone: a file renamed over (or
// removed from) the path after its check fails the run here, closed,
// instead of running what the path now holds.
func (p *plan) attachPinned(root, dst string, fd int) {
	name := "the pinned file " + dst + " left in place between its check and its mount (it was replaced or removed)"
	p.mountPoint(root, root+dst, false)
	p.call(name, unix.SYS_MOVE_MOUNT, uintptr(fd), p.cstr(""), atFDCWD, p.cstr(root+dst), unix.MOVE_MOUNT_F_EMPTY_PATH)
	p.call(name, unix.SYS_CLOSE, uintptr(fd))
	p.setattr("mount attributes "+dst, root+dst, attrRO, true)
}

// testOnlyBeforeRelease, when set, runs after the pins were compared
// before the sandbox starts and before PID 1 is released: a write there
// lands before the command's exec, in the window only the after-exec
// comparison covers.
var testOnlyBeforeRelease func()

// testOnlyAfterExecCheck, when set, runs after the after-exec comparison,
// so a test can write into a pinned file strictly after it (the status
// and output pipes are read on different goroutines).
var testOnlyAfterExecCheck func()
