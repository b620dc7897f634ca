package candidate

import (
	"io/fs"
	"path"
	"sort"

	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// ChangesLimited returns the changed-file set of the overlayfs upper
// directory upper (userxattr mode) against its lower directory lower: every
// path whose entry in the merged view differs from lower, sorted by Path in
// byte order, each path once (source: issue 15 scope 1, delegation.md §6).
//
// The result is the net difference between the merged view and lower: an
// entry re-created below an opaque directory with the same type, mode and
// content as in lower is not a change, and a directory copied up only
// because something below it changed is not a change either. A type change
// (file, directory, symlink) is one Modified change for the path, plus
// Deleted changes for a replaced directory's lower subtree and Added changes
// for a new directory's content. Ownership and timestamps are not compared.
// Renames are not inferred: a renamed file or directory is its old paths
// Deleted plus its new paths Added (overlayfs keeps no rename record).
//
// Neither tree may change during the call: call it after the agent's
// processes are gone (an entry swapped between stat and open is detected
// on a best-effort basis). Calls are independent and may run concurrently.
//
// Errors are *fault.Error: INVALID_INPUT with [ReasonNotDirectory] when
// lower or upper is not a directory (a symlink root counts as not one),
// [ReasonSpecialFile] for a FIFO, socket or device other than a 0:0
// whiteout in upper, [ReasonOverlayXattr] for overlay features this walk
// does not interpret (redirect, metacopy, an opaque value other than "y"),
// [ReasonChanged] when an entry changes type between stat and open;
// INPUT_LIMIT with [ReasonTooManyEntries] or [ReasonTooDeep] past lim;
// PROCESS_ERROR with [ReasonRead] when a read fails. Messages name the
// workspace-relative path, never a host path.
func ChangesLimited(lower, upper string, lim Limits) ([]Change, error) {
	ld, err := openRoot(lower, "lower")
	if err != nil {
		return nil, err
	}
	defer unix.Close(ld)
	ud, err := openRoot(upper, "upper")
	if err != nil {
		return nil, err
	}
	defer unix.Close(ud)
	w := &walker{lim: lim.withDefaults()}
	opaque, err := w.dirXattrs(ud, "")
	if err != nil {
		return nil, err
	}
	if err := w.walkDir("", ud, ld, opaque, 0); err != nil {
		return nil, err
	}
	sort.Slice(w.out, func(i, j int) bool { return w.out[i].Path < w.out[j].Path })
	return w.out, nil
}

// openRoot opens a walk root; the last component is not followed.
func openRoot(dir, side string) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fault.Wrap(fault.InvalidInput, ReasonNotDirectory,
			"candidate workspace: the "+side+" directory is not a directory", err).With("side", side)
	}
	return fd, nil
}

// walker accumulates the changes of one walk; it is not safe for
// concurrent use.
type walker struct {
	lim     Limits
	entries int
	out     []Change
}

// walkDir compares the upper directory ud with the lower directory ld (-1
// when there is none) at rel. hidden reports whether lower is hidden below
// rel (an opaque directory at or above rel), so lower-only names are deleted.
func (w *walker) walkDir(rel string, ud, ld int, hidden bool, depth int) error {
	if depth > w.lim.MaxDepth {
		return pathError(fault.InputLimit, ReasonTooDeep, "directory nesting over the limit", rel, nil)
	}
	names, err := w.readNames(ud, rel)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		seen[name] = true
		if err := w.pair(path.Join(rel, name), name, ud, ld, hidden, depth); err != nil {
			return err
		}
	}
	if !hidden || ld < 0 {
		return nil
	}
	lnames, err := w.readNames(ld, rel)
	if err != nil {
		return err
	}
	for _, name := range lnames {
		if !seen[name] {
			if err := w.deleteName(ld, name, path.Join(rel, name), depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// pair compares one upper entry with the lower entry of the same name.
func (w *walker) pair(rel, name string, ud, ld int, hidden bool, depth int) error {
	u, err := statUpper(ud, name, rel)
	if err != nil {
		return err
	}
	l, inLower, err := statLower(ld, name, rel)
	if err != nil {
		return err
	}
	if u.whiteout {
		if inLower {
			return w.deleteTree(ld, name, rel, l, depth)
		}
		return nil
	}
	if err := w.compare(rel, name, ud, ld, u, l, inLower, depth); err != nil {
		return err
	}
	if !u.mode.IsDir() {
		return nil
	}
	return w.descend(rel, name, ud, ld, u, l, inLower && l.mode.IsDir(), hidden, depth)
}

// compare records the change of rel itself, if any.
func (w *walker) compare(rel, name string, ud, ld int, u, l entry, inLower bool, depth int) error {
	switch {
	case !inLower:
		return w.emit(rel, name, ud, Added, u, 0)
	case u.mode.Type() != l.mode.Type():
		if err := w.emit(rel, name, ud, Modified, u, l.mode); err != nil {
			return err
		}
		if l.mode.IsDir() {
			return w.deleteChildren(ld, name, rel, l, depth)
		}
		return nil
	}
	same, err := sameEntry(rel, name, ud, ld, u, l)
	if err != nil || same {
		return err
	}
	return w.emit(rel, name, ud, Modified, u, l.mode)
}

// descend walks the upper directory rel, with its lower counterpart when
// lowerDir reports that lower holds a directory there.
func (w *walker) descend(rel, name string, ud, ld int, u, l entry, lowerDir, hidden bool, depth int) error {
	uc, err := openDir(ud, name, rel, u)
	if err != nil {
		return err
	}
	defer unix.Close(uc)
	opaque, err := w.dirXattrs(uc, rel)
	if err != nil {
		return err
	}
	lc := -1
	if lowerDir {
		if lc, err = openDir(ld, name, rel, l); err != nil {
			return err
		}
		defer unix.Close(lc)
	}
	return w.walkDir(rel, uc, lc, hidden || opaque, depth+1)
}

// emit appends a change for the upper entry u at rel.
func (w *walker) emit(rel, name string, ud int, k Kind, u entry, old fs.FileMode) error {
	c := Change{Path: rel, Kind: k, Mode: u.mode, OldMode: old}
	if u.mode.Type() == fs.ModeSymlink {
		t, err := readLink(ud, name, rel)
		if err != nil {
			return err
		}
		c.Target = t
	}
	w.out = append(w.out, c)
	return nil
}

// readNames reads every name of the directory fd, counting them against
// the entry limit.
func (w *walker) readNames(fd int, rel string) ([]string, error) {
	names, err := readDirNames(fd, rel, w.lim.MaxEntries-w.entries)
	w.entries += len(names)
	if err != nil {
		return nil, err
	}
	return names, nil
}
