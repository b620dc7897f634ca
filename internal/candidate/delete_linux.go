package candidate

import (
	"path"

	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// deleteName records the lower entry name of the directory ld, and its
// subtree, as Deleted.
func (w *walker) deleteName(ld int, name, rel string, depth int) error {
	l, ok, err := statLower(ld, name, rel)
	if err != nil || !ok {
		return err
	}
	return w.deleteTree(ld, name, rel, l, depth)
}

// deleteTree records the lower entry l at rel and, for a directory, every
// lower path below it as Deleted (delegation.md §6: a whiteout on a
// directory deletes its whole subtree).
func (w *walker) deleteTree(ld int, name, rel string, l entry, depth int) error {
	w.out = append(w.out, Change{Path: rel, Kind: Deleted, Mode: l.mode, OldMode: l.mode})
	if !l.mode.IsDir() {
		return nil
	}
	return w.deleteChildren(ld, name, rel, l, depth)
}

// deleteChildren records every lower path below the lower directory l at
// rel as Deleted, but not rel itself.
func (w *walker) deleteChildren(ld int, name, rel string, l entry, depth int) error {
	if depth+1 > w.lim.MaxDepth {
		return pathError(fault.InputLimit, ReasonTooDeep, "directory nesting over the limit", rel, nil)
	}
	lc, err := openDir(ld, name, rel, l)
	if err != nil {
		return err
	}
	defer unix.Close(lc)
	names, err := w.readNames(lc, rel)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := w.deleteName(lc, n, path.Join(rel, n), depth+1); err != nil {
			return err
		}
	}
	return nil
}
