//go:build linux && amd64

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// TestGrantOwnerNoFollow: the owner grant after a run (and removeTree's
// retry) changes only what lies beneath the tree it is given: a symlink
// in the tree to a directory or file outside, or a symlink as the tree
// itself, leaves its target's mode as it was, and removeTree of a
// symlink removes the link, not what it names. Entries inside the tree
// get u+rwx (directories) and the file bits (regular files).
func TestGrantOwnerNoFollow(t *testing.T) {
	base := t.TempDir()
	outside, tree := filepath.Join(base, "outside"), filepath.Join(base, "tree")
	for _, d := range []string{outside + "/dir", tree + "/sub"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(outside+"/file", nil, 0o200)
	os.WriteFile(tree+"/sub/own", nil, 0o200)
	os.Symlink(outside+"/dir", tree+"/sub/dirlink")
	os.Symlink(outside+"/file", tree+"/sub/filelink")
	os.Symlink(outside, base+"/toplink")
	for _, p := range []string{outside + "/dir", tree + "/sub"} {
		os.Chmod(p, 0o500)
	}
	os.Chmod(outside, 0o500)

	grantOwner(unix.AT_FDCWD, tree, 0, 0o400)
	grantOwner(unix.AT_FDCWD, base+"/toplink", 0, 0o400)
	mode := func(p string) os.FileMode {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	got := map[string]os.FileMode{"outside": mode(outside), "outside/dir": mode(outside + "/dir"), "outside/file": mode(outside + "/file"),
		"tree/sub": mode(tree + "/sub"), "tree/sub/own": mode(tree + "/sub/own")}
	want := map[string]os.FileMode{"outside": 0o500, "outside/dir": 0o500, "outside/file": 0o200, "tree/sub": 0o700, "tree/sub/own": 0o600}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes (-want +got):\n%s", diff)
	}
	if err := removeTree(base + "/toplink"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(outside + "/file"); err != nil {
		t.Errorf("removeTree of a symlink removed its target's content: %v", err)
	}
	if _, err := os.Lstat(base + "/toplink"); err == nil {
		t.Error("removeTree left the symlink")
	}
}

// TestGrantOwnerDeep: a mode-000 directory deeper than a candidate's
// depth bound (which os.RemoveAll does not have) still gets u+rwx, so an
// unprivileged supervisor can remove a job root whose command nested a
// non-empty chmod 000 directory 300 levels down in scratch; before, the grant
// stopped at 256 levels and the job root stayed behind, the stale sweep
// failing on it at every start.
func TestGrantOwnerDeep(t *testing.T) {
	top := t.TempDir()
	p := top
	for range 300 {
		p = filepath.Join(p, "d")
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(p, "f"), nil, 0o600) // a non-empty 000 directory: its owner cannot empty it
	os.Chmod(p, 0)
	grantOwner(unix.AT_FDCWD, top, 0, 0)
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	if got := st.Mode & 0o777; got != 0o700 {
		t.Errorf("deepest directory mode %#o, want 0700", got)
	}
}
