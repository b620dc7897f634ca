//go:build linux && amd64

package sandbox

import (
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// jobLockName is the file in a job root its supervisor holds an exclusive
// flock on for the job's lifetime. The kernel drops the lock when the
// supervisor dies, so a job root whose lock can be taken belongs to no
// live run.
const jobLockName = "lock"

// staleUnlockedAge is how old a job root without a lock file must be
// before it is swept: younger ones may be a run between creating its root
// and its lock.
const staleUnlockedAge = time.Hour

// lockJobRoot creates and locks root's lock file; close the file (after
// removing the root) to release it. The file is locked under a temporary
// name and then renamed into place, so a sweeper never sees an unlocked
// lock file of a live run (a root without one is only swept when old).
func lockJobRoot(root string) (*os.File, error) {
	tmp := filepath.Join(root, jobLockName+".new")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_RDWR|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	if err := os.Rename(tmp, filepath.Join(root, jobLockName)); err != nil {
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
		cg := &jobCgroups{layout: layout, leaf: filepath.Join(layout.v2, e.Name()), v1: map[string]string{}}
		for c, parent := range layout.v1 {
			cg.v1[c] = filepath.Join(parent, e.Name())
		}
		if _, err := os.Stat(cg.leaf); err == nil {
			_ = cg.kill()
			if !cg.waitEmpty(emptyTimeout) {
				continue
			}
		}
		cg.remove()
		_ = os.RemoveAll(filepath.Join(jobsDir, e.Name()))
	}
}

// stale reports whether the job root at dir belongs to no live run.
func stale(dir string) bool {
	f, err := os.Open(filepath.Join(dir, jobLockName))
	if err != nil {
		fi, serr := os.Lstat(dir)
		return os.IsNotExist(err) && serr == nil && time.Since(fi.ModTime()) > staleUnlockedAge
	}
	defer f.Close()
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
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
