//go:build linux && amd64

package sandbox

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/coagent8/coagent8/internal/fault"
)

// Workspace copy bounds: a copy beyond these refuses rather than filling
// the disk.
const (
	maxWorkspaceBytes = 8 << 30
	maxWorkspaceFiles = 1 << 20
)

// makeJobRoot creates JobsDir/<id> with the disjoint children root/,
// workspace/, scratch/ and artifacts/, and copies the input into the
// workspace (the user's directory itself is never mounted).
func (s *Sandbox) makeJobRoot(id string, j job) (root string, lock *os.File, err error) {
	if err := ensureJobsDir(s.cfg.JobsDir); err != nil {
		return "", nil, err
	}
	root = filepath.Join(s.cfg.JobsDir, id)
	if err := os.Mkdir(root, 0o711); err != nil {
		return "", nil, unavailable("jobs_dir", "a writable jobs directory", err)
	}
	if lock, err = lockJobRoot(root); err != nil {
		return root, nil, unavailable("jobs_dir", "a lockable job root", err)
	}
	if err := os.Mkdir(filepath.Join(root, "root"), 0o755); err != nil {
		return root, lock, unavailable("jobs_dir", "a writable jobs directory", err)
	}
	owner := childOwner()
	for _, d := range []string{"workspace", "scratch", "artifacts"} {
		p := filepath.Join(root, d)
		if err := os.Mkdir(p, 0o700); err != nil {
			return root, lock, unavailable("jobs_dir", "a writable jobs directory", err)
		}
		if err := chown(p, owner); err != nil {
			return root, lock, unavailable("jobs_dir", "chown of the job folders", err)
		}
	}
	if j.input != "" {
		if err := copyTree(j.input, filepath.Join(root, "workspace"), owner); err != nil {
			return root, lock, err
		}
	}
	if err := seedScratch(filepath.Join(root, "scratch"), j.scratchIn, owner); err != nil {
		return root, lock, err
	}
	return root, lock, nil
}

// childOwner is the host uid the command runs as (-1: ours, no chown).
func childOwner() int {
	if os.Geteuid() == 0 {
		return nobody
	}
	return -1
}

func chown(p string, uid int) error {
	if uid < 0 {
		return nil
	}
	return os.Lchown(p, uid, uid)
}

// ensureJobsDir creates the jobs directory 0711 and checks that it is ours:
// a directory (not a symlink) owned by us and not writable by others, so a
// pre-created /tmp entry cannot redirect job roots.
func ensureJobsDir(dir string) error {
	if err := os.Mkdir(dir, 0o711); err != nil && !errors.Is(err, fs.ErrExist) {
		return unavailable("jobs_dir", "a creatable jobs directory", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return unavailable("jobs_dir", "a jobs directory", err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || st == nil || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return unavailable("jobs_dir", "a jobs directory owned by this user and not writable by others", nil)
	}
	return nil
}

// copyTree copies src into dst without following symlinks: symlinks are
// copied as symlinks (they resolve inside the sandbox's own root), special
// files are skipped, set-id bits dropped.
func copyTree(src, dst string, owner int) error {
	var bytes, files int64
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return copyErr(err)
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "." {
			return nil
		}
		if files++; files > maxWorkspaceFiles {
			return invalid("sandbox.input", "input has too many files")
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			err = os.Mkdir(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			var t string
			if t, err = os.Readlink(p); err == nil {
				err = os.Symlink(t, target)
			}
		case d.Type().IsRegular():
			var n int64
			n, err = copyFile(p, target)
			if bytes += n; bytes > maxWorkspaceBytes {
				return invalid("sandbox.input", "input is too large")
			}
		default:
			return nil
		}
		if err == nil {
			err = chown(target, owner)
		}
		return copyErr(err)
	})
}

func copyErr(err error) error {
	if err == nil {
		return nil
	}
	return fault.Wrap(fault.InvalidInput, "sandbox.input", "cannot copy the input into the workspace", err)
}

func copyFile(src, dst string) (int64, error) {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return 0, err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, fi.Mode().Perm())
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}
