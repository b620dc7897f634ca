package candidate

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// testOnlyBeforeOpen, when set by a test, runs after an entry at rel was
// stat'ed and before it is opened or its link read, so a test can swap it.
var testOnlyBeforeOpen func(rel string)

// entry is one stat'ed directory entry.
type entry struct {
	mode     fs.FileMode
	size     int64
	dev, ino uint64
	whiteout bool
}

// lstatAt stats name in the directory fd without following a symlink.
func lstatAt(fd int, name string) (entry, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return entry{}, err
	}
	return entryOf(&st), nil
}

func entryOf(st *unix.Stat_t) entry {
	m := fileMode(st.Mode)
	return entry{
		mode: m, size: st.Size, dev: st.Dev, ino: st.Ino,
		whiteout: m.Type() == fs.ModeDevice|fs.ModeCharDevice && st.Rdev == 0,
	}
}

// statUpper stats an upper entry and refuses special files other than a
// whiteout.
func statUpper(ud int, name, rel string) (entry, error) {
	u, err := lstatAt(ud, name)
	if err != nil {
		return entry{}, pathError(fault.ProcessError, ReasonRead, "cannot stat", rel, err)
	}
	if !u.whiteout && !u.mode.IsRegular() && !u.mode.IsDir() && u.mode.Type() != fs.ModeSymlink {
		return entry{}, pathError(fault.InvalidInput, ReasonSpecialFile,
			"special file (only regular files, directories, symlinks and whiteouts are allowed)", rel, nil).
			With("mode", u.mode.String())
	}
	return u, nil
}

// statLower stats name in the lower directory ld (-1: none) and reports
// whether it exists.
func statLower(ld int, name, rel string) (entry, bool, error) {
	if ld < 0 {
		return entry{}, false, nil
	}
	l, err := lstatAt(ld, name)
	switch {
	case errors.Is(err, unix.ENOENT):
		return entry{}, false, nil
	case err != nil:
		return entry{}, false, pathError(fault.ProcessError, ReasonRead, "cannot stat in lower", rel, err)
	}
	return l, true, nil
}

// openAt opens name below fd without following a symlink and checks that it
// is still the entry e that was stat'ed.
func openAt(fd int, name, rel string, e entry, flags int) (int, error) {
	if testOnlyBeforeOpen != nil {
		testOnlyBeforeOpen(rel)
	}
	nfd, err := unix.Openat(fd, name, flags|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ENOENT) {
			return -1, pathError(fault.InvalidInput, ReasonChanged, "entry changed during the walk", rel, err)
		}
		return -1, pathError(fault.ProcessError, ReasonRead, "cannot open", rel, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(nfd, &st); err != nil {
		unix.Close(nfd)
		return -1, pathError(fault.ProcessError, ReasonRead, "cannot stat", rel, err)
	}
	if st.Dev != e.dev || st.Ino != e.ino || fileMode(st.Mode).Type() != e.mode.Type() {
		unix.Close(nfd)
		return -1, pathError(fault.InvalidInput, ReasonChanged, "entry changed during the walk", rel, nil)
	}
	return nfd, nil
}

// openDir opens the directory entry e named name below fd.
func openDir(fd int, name, rel string, e entry) (int, error) {
	return openAt(fd, name, rel, e, unix.O_DIRECTORY)
}

// readLink returns the target of the symlink name below fd.
func readLink(fd int, name, rel string) (string, error) {
	if testOnlyBeforeOpen != nil {
		testOnlyBeforeOpen(rel)
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, name, buf)
	switch {
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT):
		return "", pathError(fault.InvalidInput, ReasonChanged, "entry changed during the walk", rel, err)
	case err != nil:
		return "", pathError(fault.ProcessError, ReasonRead, "cannot read link", rel, err)
	case n >= len(buf):
		return "", pathError(fault.InvalidInput, ReasonChanged, "link target over PATH_MAX", rel, nil)
	}
	return string(buf[:n]), nil
}

// fileMode converts a stat mode to an fs.FileMode, as os.Lstat does.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
