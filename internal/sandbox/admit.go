package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
)

// Admission bounds (issue 8 scope 4: "bounded argument count and length").
// They stay within execve's own: one string of argv or envp may be at most
// MAX_ARG_STRLEN (32 pages) including its NUL, and all of them together
// at most a quarter of the stack limit (2 MiB by default); a command that
// passes admission must not fail at exec for its size (that refuses as
// SANDBOX_UNAVAILABLE, blaming the host).
const (
	maxArgs     = 4096
	maxArgLen   = 128<<10 - 1 // an argument or an environment entry
	maxArgTotal = 1 << 20     // arguments and environment together
	maxPathLen  = 4096
)

// CheckPath reports whether p is a canonical absolute path: absolute,
// identical to filepath.Clean(p), no ".." component and no control bytes.
// It does not touch the filesystem. The error is fault.InvalidInput.
func CheckPath(p string) error {
	switch {
	case p == "" || len(p) > maxPathLen:
		return invalid("sandbox.path", "path is empty or too long")
	case hasControl(p):
		return invalid("sandbox.path", "path contains control bytes")
	case !filepath.IsAbs(p) || !strings.HasPrefix(p, "/"):
		return invalid("sandbox.path", "path is not absolute")
	case filepath.Clean(p) != p:
		return invalid("sandbox.path", "path is not canonical")
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return invalid("sandbox.path", "path contains ..")
		}
	}
	return nil
}

// checkNoSymlinks walks every component of the canonical path p with Lstat
// and fails when any is a symlink or missing, so the path the child gets is
// the path that was checked (notes/sandbox.md §3 step 1).
func checkNoSymlinks(p string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	cur := "/"
	for _, c := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if c == "" {
			continue
		}
		cur = filepath.Join(cur, c)
		var err error
		if fi, err = os.Lstat(cur); err != nil {
			return nil, fault.Wrap(fault.InvalidInput, "sandbox.path", "path does not exist", err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			msg := "path contains a symlink"
			if real, err := filepath.EvalSymlinks(p); err == nil && !hasControl(real) {
				msg += "; the canonical path is " + real
			}
			return nil, invalid("sandbox.path", msg)
		}
	}
	if fi == nil {
		return os.Lstat("/")
	}
	return fi, nil
}

// admitCommand checks the executable and argv of s (issue 8 scope 4):
// canonical absolute executable that exists, is a regular file with an
// execute bit and has no symlink on its path; bounded literal arguments.
func admitCommand(s Spec) error {
	if err := CheckPath(s.Path); err != nil {
		return err
	}
	fi, err := checkNoSymlinks(s.Path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return invalid("sandbox.exec", "executable is not a regular executable file")
	}
	return checkArgs(s.Args)
}

// checkArgs bounds argument count and size. Arguments are otherwise literal:
// "$(id)", ";" or newlines reach the child verbatim because there is no
// shell (notes/sandbox.md test 18).
func checkArgs(args []string) error {
	if len(args) > maxArgs {
		return invalid("sandbox.args", fmt.Sprintf("more than %d arguments", maxArgs))
	}
	total := 0
	for _, a := range args {
		if len(a) > maxArgLen || strings.IndexByte(a, 0) >= 0 {
			return invalid("sandbox.args", "argument too long or contains NUL")
		}
		total += len(a)
	}
	if total > maxArgTotal {
		return invalid("sandbox.args", "arguments too long in total")
	}
	return nil
}

// checkDir validates the relative working directory.
func checkDir(d string) error {
	if d == "" {
		return nil
	}
	if hasControl(d) || filepath.IsAbs(d) || !filepath.IsLocal(d) || filepath.Clean(d) != d {
		return invalid("sandbox.dir", "working directory must be a clean relative path beneath the workspace")
	}
	return nil
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

func invalid(reason, msg string) error {
	return fault.New(fault.InvalidInput, reason, msg)
}
