//go:build linux && amd64

package sandbox

import (
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// staleMinAge is how old an unlocked job root must be before it is swept.
// A run locks its root right after creating it (lockJobRoot), so only a
// root in that instant, or one whose supervisor died, is unlocked; the age
// keeps the former safe.
const staleMinAge = time.Minute

// lockJobRoot takes an exclusive flock on the job root directory itself
// for the job's lifetime (no file to create: this is on every run's path).
// The kernel drops the lock when the supervisor dies, so an old unlocked
// root belongs to no live run. Close the returned file (after removing the
// root) to release it.
func lockJobRoot(root string) (*os.File, error) {
	f, err := os.Open(root)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// sweepStale removes what runs whose supervisor died (SIGKILL, power
// loss) left behind: their job roots, including any workspace copy, and
// their empty cgroups. The sandboxed processes themselves died with their
// supervisor (parent-death signal, PID namespace); a cgroup that is still
// populated is killed first. Best effort: errors leave the entry for the
// next run.
func sweepStale(jobsDir string, layout cgroupLayout) {
	entries, err := os.ReadDir(jobsDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !isJobID(e.Name()) || !stale(filepath.Join(jobsDir, e.Name())) {
			continue
		}
		cg := layout.job(e.Name())
		if _, err := os.Stat(cg.leaf); err == nil {
			_ = cg.kill()
			if !cg.waitEmpty(emptyTimeout) {
				continue
			}
		}
		cg.remove()
		_ = removeTree(filepath.Join(jobsDir, e.Name()))
	}
}

// stale reports whether the job root at dir belongs to no live run: old
// enough and not locked.
func stale(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || time.Since(fi.ModTime()) < staleMinAge {
		return false
	}
	f, err := lockJobRoot(dir)
	if err != nil {
		return false
	}
	f.Close() // job ids are never reused, and two sweepers removing one root is harmless
	return true
}

// isJobID reports whether name has the form newJobID makes (24 lowercase
// hex digits), so nothing else in the jobs directory is ever removed.
func isJobID(name string) bool {
	if len(name) != 24 {
		return false
	}
	for _, c := range name {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
