package candidate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// build makes a tree under root from lines "KIND PATH [ARG]":
// f file 0644 (ARG content), x file 0755, d dir 0755, D dir 0700,
// o opaque dir, l symlink (ARG target), w whiteout (c 0:0), p FIFO,
// c char device 1:3, X xattr on PATH (ARG name=value).
func build(t *testing.T, root string, lines ...string) {
	t.Helper()
	for _, line := range lines {
		kind, rest, _ := strings.Cut(line, " ")
		rel, arg, _ := strings.Cut(rest, " ")
		p := filepath.Join(root, rel)
		if kind != "X" {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := buildOne(kind, p, arg); err != nil {
			t.Fatalf("build %q: %v", line, err)
		}
	}
}

func buildOne(kind, p, arg string) error {
	switch kind {
	case "f", "x":
		mode := os.FileMode(0o644)
		if kind == "x" {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(arg), mode); err != nil {
			return err
		}
		return os.Chmod(p, mode)
	case "d", "D", "o":
		return mkdirOpaque(kind, p)
	case "l":
		return os.Symlink(arg, p)
	case "w":
		return unix.Mknod(p, unix.S_IFCHR, 0)
	case "p":
		return unix.Mkfifo(p, 0o644)
	case "c":
		return unix.Mknod(p, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3)))
	case "X":
		name, value, _ := strings.Cut(arg, "=")
		return unix.Lsetxattr(p, name, []byte(value), 0)
	}
	return errors.New("unknown kind " + kind)
}

func mkdirOpaque(kind, p string) error {
	mode := os.FileMode(0o755)
	if kind == "D" {
		mode = 0o700
	}
	if err := os.Mkdir(p, mode); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := os.Chmod(p, mode); err != nil {
		return err
	}
	if kind == "o" {
		return unix.Setxattr(p, xattrOpaque, []byte("y"), 0)
	}
	return nil
}

// trees returns fresh lower and upper directories built from the lines.
func trees(t *testing.T, lower, upper []string) (string, string) {
	t.Helper()
	l, u := filepath.Join(t.TempDir(), "lower"), filepath.Join(t.TempDir(), "upper")
	for _, d := range []string{l, u} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	build(t, l, lower...)
	build(t, u, upper...)
	return l, u
}

// wantFault fails unless err is a *fault.Error with code, reason and, when
// path is not "", Details["path"] == path.
func wantFault(t *testing.T, err error, code fault.Code, reason, path string) {
	t.Helper()
	var fe *fault.Error
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want *fault.Error %s %s", err, code, reason)
	}
	if fe.Code != code || fe.Reason != reason || (path != "" && fe.Details["path"] != path) {
		t.Fatalf("err = %s %s path %q (%v), want %s %s path %q", fe.Code, fe.Reason, fe.Details["path"], fe, code, reason, path)
	}
}
