//go:build linux && amd64

package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// When a pin is compared again with what its check saw ([pinWatch.verify]).
const (
	pinAtCheck   = "while it was checked"
	pinAtRelease = "before the sandbox started"
	pinAtExec    = "after the command started"
	pinAtEnd     = "when the run ended"
)

// pinStat is what a pinned file's descriptor showed (statx): a write in
// place changes its size or mtime, and always its ctime, which user
// space cannot set back (utimensat sets ctime to now). On kernels with
// multigrain timestamps (6.13+; ext4, xfs, btrfs, tmpfs) a change after a
// statx that asked for ctime gets a ctime distinct from the one that
// statx returned, however soon it follows. The change cookie (i_version,
// STATX_CHANGE_COOKIE) would be exact, but the kernel does not report it
// to user space (include/linux/stat.h: "not exposed to userland"); the
// inotify watch covers coarser clocks.
//
// Any change of ctime refuses, also one that only moved a link (a file
// renamed over the pinned path, as an update does, leaves the checked
// inode unlinked, which sets its ctime): ctime alone cannot tell a link
// change from a write through a shared mapping whose mtime was set back.
// An update of the CLI during a run therefore refuses that run.
type pinStat struct {
	dev, ino, size uint64
	nlink          uint32
	mtime, ctime   unix.StatxTimestamp
}

// pinStatMask is what statx must report for a pinStat.
const pinStatMask = unix.STATX_INO | unix.STATX_SIZE | unix.STATX_NLINK | unix.STATX_MTIME | unix.STATX_CTIME

func statPin(f *os.File) (pinStat, error) {
	var st unix.Statx_t
	err := unix.Statx(int(f.Fd()), "", unix.AT_EMPTY_PATH|unix.AT_STATX_SYNC_AS_STAT, pinStatMask, &st)
	if err == nil && st.Mask&pinStatMask != pinStatMask {
		err = fmt.Errorf("statx reported mask %#x, want %#x", st.Mask, pinStatMask)
	}
	return pinStat{dev: uint64(st.Dev_major)<<32 | uint64(st.Dev_minor), ino: st.Ino, size: st.Size, nlink: st.Nlink,
		mtime: st.Mtime, ctime: st.Ctime}, err
}

// diff names the fields of s that differ from was ("" when none).
func (s pinStat) diff(was pinStat) string {
	var d []string
	ts := func(t unix.StatxTimestamp) string { return fmt.Sprintf("%d.%09d", t.Sec, t.Nsec) }
	if s.dev != was.dev || s.ino != was.ino {
		d = append(d, fmt.Sprintf("inode %d:%d, was %d:%d", s.dev, s.ino, was.dev, was.ino))
	}
	if s.nlink != was.nlink {
		d = append(d, fmt.Sprintf("%d links, was %d (replaced, removed or linked at a path)", s.nlink, was.nlink))
	}
	if s.size != was.size {
		d = append(d, fmt.Sprintf("size %d, was %d", s.size, was.size))
	}
	if s.mtime != was.mtime {
		d = append(d, "mtime "+ts(s.mtime)+", was "+ts(was.mtime))
	}
	if s.ctime != was.ctime {
		d = append(d, "ctime "+ts(s.ctime)+", was "+ts(was.ctime))
	}
	return strings.Join(d, "; ")
}

// pinWatch keeps each pinned file's checked descriptor and what statx
// showed of it before its check, and an inotify watch (IN_MODIFY) on
// those inodes, from before the check to the end of the run. Any write
// into a checked inode — by its owner, in place, through any path or
// mount — shows as a changed statx or an inotify event, and verify
// refuses the run's result. byPath is the unprivileged supervisor's pin
// (PID 1 binds the path): verify also requires the path to still name
// the checked inode, so a file renamed over it before the bind refuses
// too (after the fact; a rename there and back in between is not seen).
type pinWatch struct {
	byPath  bool
	paths   []string
	files   []*os.File
	seen    []pinStat
	watches map[int]int // inotify watch descriptor → index; nil before the first check
	notify  int         // inotify descriptor, when watches is set
	written map[int]string
	changed []string // the paths verify found changed
}

// check watches p's file f (taking ownership of it), runs the pin's
// check on it and compares its statx before and after (a write during
// the check). Errors: the check's, or SANDBOX_UNAVAILABLE sandbox.pin
// (no watch) or sandbox.pin_changed.
func (w *pinWatch) check(p pinned, f *os.File) error {
	w.paths, w.files = append(w.paths, p.path), append(w.files, f)
	if w.watches == nil {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			return unavailable("pin", "an inotify watch on the pinned files", err)
		}
		w.notify, w.watches, w.written = fd, map[int]int{}, map[int]string{}
	}
	wd, err := unix.InotifyAddWatch(w.notify, fmt.Sprintf("/proc/self/fd/%d", f.Fd()), unix.IN_MODIFY)
	if err != nil {
		return unavailable("pin", "an inotify watch on the pinned file "+p.path, err)
	}
	w.watches[wd] = len(w.files) - 1
	st, err := statPin(f)
	if err != nil {
		return unavailable("pin", "statx of the pinned file "+p.path, err)
	}
	w.seen = append(w.seen, st)
	if err := checkFile(p, f); err != nil {
		return err
	}
	return w.verify(pinAtCheck)
}

// verify compares every pinned file with what its check saw: its statx
// through the checked descriptor, the inotify events since, and (byPath)
// the inode at the path. The first difference is SANDBOX_UNAVAILABLE
// sandbox.pin_changed naming the file, when it was seen and what
// changed; every changed path is kept for the receipt. A nil watch has
// no pins.
func (w *pinWatch) verify(when string) error {
	if w == nil || len(w.files) == 0 {
		return nil
	}
	if err := w.events(); err != nil {
		return unavailable("pin", "the inotify watch on the pinned files", err)
	}
	why := map[int]string{}
	for i, f := range w.files {
		now, err := statPin(f)
		switch {
		case err != nil:
			why[i] = "statx: " + err.Error()
		case now != w.seen[i]:
			why[i] = now.diff(w.seen[i])
		case w.written[i] != "":
			why[i] = w.written[i]
		case w.byPath && when != pinAtEnd:
			// PID 1 binds the path before the command starts; a later
			// rename over it changes nothing that runs.
			if cur, err := pathIno(w.paths[i]); err != nil || cur != [2]uint64{now.dev, now.ino} {
				why[i] = "the path no longer names the checked file"
			}
		}
	}
	var first error
	w.changed = nil
	for i, p := range w.paths {
		if why[i] == "" {
			continue
		}
		w.changed = append(w.changed, p)
		if first == nil {
			first = fault.New(fault.SandboxUnavailable, "sandbox.pin_changed", "the pinned file "+p+
				" changed after its check ("+why[i]+"), seen "+when+": the run ran or would run bytes that were not checked, so its result is refused").
				With("path", p).With("seen", when).With("missing", "the pinned file "+p+" unchanged since its check")
		}
	}
	return first
}

// events drains the inotify queue into w.written, by pin index (kept:
// an event is read once). An overflow or a lost watch counts against
// every pin: none can be vouched for any more.
func (w *pinWatch) events() error {
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(w.notify, buf)
		if err == unix.EAGAIN {
			return nil
		}
		if err != nil {
			return err
		}
		for b := buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
			wd, mask := int(int32(binary.NativeEndian.Uint32(b))), binary.NativeEndian.Uint32(b[4:])
			b = b[min(len(b), unix.SizeofInotifyEvent+int(binary.NativeEndian.Uint32(b[12:]))):]
			i, ok := w.watches[wd]
			switch {
			case mask&unix.IN_MODIFY != 0 && ok:
				w.written[i] = "written since its check (inotify)"
			default:
				for k := range w.files {
					w.written[k] = fmt.Sprintf("its inotify watch reported %#x", mask)
				}
			}
		}
	}
}

// pathIno is the device and inode the path names (no final symlink).
func pathIno(path string) ([2]uint64, error) {
	var st unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO, &st)
	return [2]uint64{uint64(st.Dev_major)<<32 | uint64(st.Dev_minor), st.Ino}, err
}

// close closes the checked descriptors and the inotify watch.
func (w *pinWatch) close() {
	if w == nil {
		return
	}
	for _, f := range w.files {
		f.Close()
	}
	if w.watches != nil {
		unix.Close(w.notify)
		w.watches = nil
	}
	w.files = nil
}
