package candidate

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// kernelLower is the lower tree the scripted edits of editScript run on.
var kernelLower = []string{
	"f keep.txt keep", "f mod.txt old content", "f del.txt bye", "f chmod.sh echo",
	"f deldir/a a", "f deldir/sub/b b",
	"f opq/x x", "f opq/y y", "f opq/same same", "f opq/sub/z z",
	"f f2d file", "f d2f/c c",
	"l oldlink keep.txt", "f ren-old.txt renamed",
	"f mvsrc/m1 m1", "f mvsrc/deep/m2 m2",
	"f nest/a/b.txt nested", "f nest/a/keep k", "d perm",
}

// kernelWant is the changed-file set of editScript on kernelLower.
var kernelWant = []Change{
	mod("chmod.sh", exe, file),
	mod("d2f", file, dir), del("d2f/c", file),
	del("del.txt", file),
	del("deldir", dir), del("deldir/a", file), del("deldir/sub", dir), del("deldir/sub/b", file),
	mod("f2d", dir, file), add("f2d/inner", file),
	withTarget(add("link", link), "keep.txt"),
	mod("mod.txt", file, file),
	add("mvdst", dir), add("mvdst/deep", dir), add("mvdst/deep/m2", file), add("mvdst/m1", file),
	del("mvsrc", dir), del("mvsrc/deep", dir), del("mvsrc/deep/m2", file), del("mvsrc/m1", file),
	mod("nest/a/b.txt", file, file),
	add("new.txt", file), add("newdir", dir), add("newdir/n.txt", file),
	withTarget(mod("oldlink", link, link), "mod.txt"),
	del("opq/sub", dir), del("opq/sub/z", file), mod("opq/x", file, file), del("opq/y", file),
	mod("perm", fs.ModeDir|0o700, dir),
	add("ren-new.txt", file), del("ren-old.txt", file),
}

// TestChangesRealOverlay mounts a real overlay (userxattr) in fresh user
// and mount namespaces, edits the merged view there, and reads the upper
// directory back on the host once the namespace is gone.
func TestChangesRealOverlay(t *testing.T) {
	root := t.TempDir()
	dirs := make([]string, 4)
	for i, name := range []string{"lower", "upper", "work", "merged"} {
		dirs[i] = filepath.Join(root, name)
		if err := os.Mkdir(dirs[i], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	build(t, dirs[0], kernelLower...)
	if out, err := overlayHelper(dirs).CombinedOutput(); err != nil {
		t.Fatalf("overlay helper: %v\n%s", err, out)
	}
	checkEncoding(t, dirs[1])
	got, err := Changes(dirs[0], dirs[1])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kernelWant, got); diff != "" {
		t.Errorf("Changes() mismatch (-want +got):\n%s", diff)
	}
}

// overlayHelper returns the test binary re-executed as the overlay helper
// in new user and mount namespaces that map the caller's uid and gid to 0.
func overlayHelper(dirs []string) *exec.Cmd {
	self, _ := os.Executable()
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=overlay-edit", "CANDIDATE_TEST_DIRS="+strings.Join(dirs, "\n"))
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	return cmd
}

// checkEncoding asserts the overlay encoding this package relies on
// (delegation.md §6), so a kernel that changes it fails here first.
func checkEncoding(t *testing.T, upper string) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(upper, "del.txt"), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != 0 {
		t.Errorf("del.txt in upper is not a 0:0 whiteout: mode %o rdev %d err %v", st.Mode, st.Rdev, err)
	}
	buf := make([]byte, 8)
	n, err := unix.Lgetxattr(filepath.Join(upper, "opq"), xattrOpaque, buf)
	if err != nil || string(buf[:n]) != "y" {
		t.Errorf("opq in upper: %s = %q, %v; want \"y\"", xattrOpaque, buf[:n], err)
	}
}
