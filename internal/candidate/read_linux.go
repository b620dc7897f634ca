package candidate

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// Overlay xattrs in userxattr mode (Documentation/filesystems/overlayfs.rst).
const (
	xattrOpaque   = "user.overlay.opaque"
	xattrRedirect = "user.overlay.redirect"
	xattrMetacopy = "user.overlay.metacopy"
)

// readDirNames reads the names of the directory fd (without "." and "..")
// in batches, failing once more than max names were read. fd stays open.
func readDirNames(fd int, rel string, max int) ([]string, error) {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, pathError(fault.ProcessError, ReasonRead, "cannot read directory", rel, err)
	}
	f := os.NewFile(uintptr(dup), rel)
	defer f.Close()
	var names []string
	for {
		batch, err := f.Readdirnames(1024)
		names = append(names, batch...)
		if len(names) > max {
			return names, pathError(fault.InputLimit, ReasonTooManyEntries, "more directory entries than the limit", rel, nil)
		}
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return names, pathError(fault.ProcessError, ReasonRead, "cannot read directory", rel, err)
		}
	}
}

// dirXattrs reports whether the upper directory fd is opaque, refusing a
// redirect or an opaque value other than "y" (a value this walk does not
// interpret: kernel 6.7+ uses "x" in lower layers for xwhiteouts).
func (w *walker) dirXattrs(fd int, rel string) (bool, error) {
	if err := refuseXattr(fd, xattrRedirect, rel); err != nil {
		return false, err
	}
	v, ok, err := getXattr(fd, xattrOpaque, rel)
	switch {
	case err != nil || !ok:
		return false, err
	case v != "y":
		return false, pathError(fault.InvalidInput, ReasonOverlayXattr, "unsupported overlay opaque value", rel, nil)
	}
	return true, nil
}

// refuseXattr fails when fd carries the overlay xattr name.
func refuseXattr(fd int, name, rel string) error {
	_, ok, err := getXattr(fd, name, rel)
	if err == nil && ok {
		err = pathError(fault.InvalidInput, ReasonOverlayXattr, "unsupported overlay feature "+name, rel, nil)
	}
	return err
}

// getXattr reads the xattr name of fd and reports whether it is set.
func getXattr(fd int, name, rel string) (string, bool, error) {
	buf := make([]byte, 256)
	n, err := unix.Fgetxattr(fd, name, buf)
	switch {
	case errors.Is(err, unix.ENODATA) || errors.Is(err, unix.ENOTSUP):
		return "", false, nil
	case errors.Is(err, unix.ERANGE):
		return "", true, pathError(fault.InvalidInput, ReasonOverlayXattr, "oversized overlay xattr "+name, rel, nil)
	case err != nil:
		return "", false, pathError(fault.ProcessError, ReasonRead, "cannot read xattr", rel, err)
	}
	return string(buf[:n]), true, nil
}

// sameEntry reports whether the upper entry u and the lower entry l of the
// same type are equal: mode, and content for a regular file, target for a
// symlink. Directories compare by mode only (their content is walked).
func sameEntry(rel, name string, ud, ld int, u, l entry) (bool, error) {
	switch {
	case u.mode.IsDir():
		return u.mode == l.mode, nil
	case u.mode.Type() == fs.ModeSymlink:
		ut, err := readLink(ud, name, rel)
		if err != nil {
			return false, err
		}
		lt, err := readLink(ld, name, rel)
		return ut == lt, err
	}
	return sameFile(rel, name, ud, ld, u, l)
}

// sameFile compares two regular files; the upper one must not be an
// overlay metacopy (its data would be in lower).
func sameFile(rel, name string, ud, ld int, u, l entry) (bool, error) {
	uf, err := openAt(ud, name, rel, u, 0)
	if err != nil {
		return false, err
	}
	defer unix.Close(uf)
	for _, x := range []string{xattrMetacopy, xattrRedirect} {
		if err := refuseXattr(uf, x, rel); err != nil {
			return false, err
		}
	}
	if u.mode != l.mode || u.size != l.size {
		return false, nil
	}
	lf, err := openAt(ld, name, rel, l, 0)
	if err != nil {
		return false, err
	}
	defer unix.Close(lf)
	return sameContent(uf, lf, rel)
}

// sameContent compares two open files byte by byte.
func sameContent(a, b int, rel string) (bool, error) {
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	ra, rb := fdReader(a), fdReader(b)
	for {
		na, ea := io.ReadFull(ra, ba)
		nb, eb := io.ReadFull(rb, bb)
		if !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea != nil || eb != nil {
			return readDone(ea, eb, rel)
		}
	}
}

// readDone classifies the end of a comparison: both at EOF is equal.
func readDone(ea, eb error, rel string) (bool, error) {
	eof := func(e error) bool { return e == nil || errors.Is(e, io.EOF) || errors.Is(e, io.ErrUnexpectedEOF) }
	if !eof(ea) || !eof(eb) {
		return false, pathError(fault.ProcessError, ReasonRead, "cannot read", rel, errors.Join(ea, eb))
	}
	return (ea == nil) == (eb == nil), nil
}

// fdReader reads a raw descriptor without taking ownership of it.
type fdReader int

func (r fdReader) Read(p []byte) (int, error) {
	n, err := unix.Read(int(r), p)
	if err == nil && n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	if n < 0 {
		n = 0
	}
	return n, err
}
