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
