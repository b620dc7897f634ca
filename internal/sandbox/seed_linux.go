//go:build linux && amd64

package sandbox

import (
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// adoptSeed checks a seeded upper layer ([Candidate.Seeded]) and gives
// every entry to uid (the command's user; -1 keeps the supervisor's, who
// is the command's user then). It never follows a symbolic link: the
// walk lstat()s and lchown()s. An entry that is not a directory, regular
// file, symbolic link or whiteout, a setuid/setgid/sticky bit, a hard
// link, or more than [MaxSeedEntries] entries refuse the run (INVALID_INPUT
// sandbox.candidate_seed): the upper layer is what the agent's view shows
// on top of the workspace, so only workspace-like content may be in it.
func adoptSeed(upper string, uid int) error {
	n := 0
	return filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return unavailable("candidate", "the seeded upper layer", err)
		}
		if n++; n > MaxSeedEntries {
			return invalid(reasonSeed, fmt.Sprintf("the seeded upper layer has more than %d entries", MaxSeedEntries))
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return unavailable("candidate", "the seeded upper layer", err)
		}
		if err := seedEntryOK(&st); err != nil {
			rel, _ := filepath.Rel(upper, p)
			return invalid(reasonSeed, "the seeded upper layer's entry "+rel+" "+err.Error())
		}
		if err := chown(p, uid); err != nil {
			return unavailable("candidate", "chown of the seeded upper layer", err)
		}
		return nil
	})
}

// seedEntryOK accepts a directory, a regular file with one link, a
// symbolic link or a whiteout (character device 0:0), without special
// permission bits.
func seedEntryOK(st *unix.Stat_t) error {
	if st.Mode&(unix.S_ISUID|unix.S_ISGID|unix.S_ISVTX) != 0 {
		return fmt.Errorf("has a setuid, setgid or sticky bit")
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR, unix.S_IFLNK:
		return nil
	case unix.S_IFREG:
		if st.Nlink != 1 {
			return fmt.Errorf("is a hard link")
		}
		return nil
	case unix.S_IFCHR:
		if st.Rdev == 0 {
			return nil
		}
	}
	return fmt.Errorf("is neither a directory, a regular file, a symbolic link nor a whiteout")
}
