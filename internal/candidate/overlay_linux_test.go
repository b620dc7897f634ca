package candidate

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// roleEnv switches the test binary into the overlay helper, which runs in
// fresh user and mount namespaces (re-exec, as internal/process does).
const roleEnv = "CANDIDATE_TEST_ROLE"

func TestMain(m *testing.M) {
	syscall.Umask(0o022)
	if os.Getenv(roleEnv) == "overlay-edit" {
		if err := overlayEdit(strings.Split(os.Getenv("CANDIDATE_TEST_DIRS"), "\n")); err != nil {
			fmt.Fprintln(os.Stderr, "overlay helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// overlayOptions is the mount data of a candidate view (delegation.md §6:
// without userxattr, deleting a lower directory fails with EIO).
func overlayOptions(lower, upper, work string) string {
	return "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work + ",userxattr"
}

// overlayEdit mounts the overlay over dirs[3] and edits the merged view.
func overlayEdit(dirs []string) error {
	if len(dirs) != 4 {
		return fmt.Errorf("want 4 dirs, got %q", dirs)
	}
	if err := unix.Mount("overlay", dirs[3], "overlay", 0, overlayOptions(dirs[0], dirs[1], dirs[2])); err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	for _, step := range editScript(dirs[3]) {
		if err := step.run(); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
	}
	return nil
}

type step struct {
	name string
	run  func() error
}

// editScript is the scripted session of the kernel test, in the merged
// view m.
func editScript(m string) []step {
	p := func(rel string) string { return filepath.Join(m, rel) }
	write := func(rel, data string) func() error {
		return func() error { return os.WriteFile(p(rel), []byte(data), 0o644) }
	}
	return []step{
		{"modify", write("mod.txt", "new content")},
		{"add", write("new.txt", "added")},
		{"delete file", func() error { return os.Remove(p("del.txt")) }},
		{"delete dir", func() error { return os.RemoveAll(p("deldir")) }},
		{"rm -rf + mkdir", func() error { return recreate(p("opq")) }},
		{"opaque modify", write("opq/x", "changed")},
		{"opaque same", write("opq/same", "same")},
		{"chmod only", func() error { return os.Chmod(p("chmod.sh"), 0o755) }},
		{"file to dir", func() error { return recreate(p("f2d")) }},
		{"file to dir content", write("f2d/inner", "inner")},
		{"dir to file", func() error { return os.RemoveAll(p("d2f")) }},
		{"dir to file content", write("d2f", "now a file")},
		{"add symlink", func() error { return os.Symlink("keep.txt", p("link")) }},
		{"retarget symlink", func() error { return retarget(p("oldlink"), "mod.txt") }},
		{"rename file", func() error { return os.Rename(p("ren-old.txt"), p("ren-new.txt")) }},
		{"rename dir is EXDEV", func() error { return wantEXDEV(os.Rename(p("mvsrc"), p("mvdst"))) }},
		{"mv dir", func() error { return run("mv", p("mvsrc"), p("mvdst")) }},
		{"nested modify", write("nest/a/b.txt", "nested new")},
		{"add dir", func() error { return os.Mkdir(p("newdir"), 0o755) }},
		{"add dir content", write("newdir/n.txt", "n")},
		{"chmod dir", func() error { return os.Chmod(p("perm"), 0o700) }},
	}
}

func recreate(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Mkdir(dir, 0o755)
}

func retarget(link, target string) error {
	if err := os.Remove(link); err != nil {
		return err
	}
	return os.Symlink(target, link)
}

func wantEXDEV(err error) error {
	if !errors.Is(err, unix.EXDEV) {
		return fmt.Errorf("rename of a lower directory = %v, want EXDEV (redirect_dir=nofollow)", err)
	}
	return nil
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, out)
	}
	return nil
}
