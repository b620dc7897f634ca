package secret

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
)

// MaxFileBytes bounds a file a reference names: a credential, or a small
// JSON credentials file (Claude Code's holds one login).
const MaxFileBytes = 64 << 10

// ReadFile reads the file a file: reference names for r (which the
// error names, never a byte of the file). It refuses, as a
// *[BindingError] saying what to fix, a path that is missing or
// unreadable, that is not a regular file once symlinks are followed (a
// FIFO, whose open would block every resolution; a device such as
// /dev/zero, read without end), that the kernel makes up (a file under
// /proc or /sys, such as /proc/self/environ), that is larger than
// [MaxFileBytes] or that holds a NUL byte.
func ReadFile(r Ref, path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, &BindingError{Ref: r, Err: errors.New("file unreadable (missing or not permitted)")}
	}
	if !fi.Mode().IsRegular() {
		return nil, &BindingError{Ref: r, Err: errors.New("not a regular file (" + fi.Mode().Type().String() + "): name the credential file itself")}
	}
	return readOpen(r, path)
}

// readOpen opens path without waiting for a FIFO's writer and reads it
// if the opened file is a regular one of at most [MaxFileBytes]: the
// path may have been replaced since ReadFile's Stat.
func readOpen(r Ref, path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, &BindingError{Ref: r, Err: errors.New("file unreadable")}
	}
	defer f.Close()
	// The open file again: the path may have been replaced meanwhile.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, &BindingError{Ref: r, Err: errors.New("not a regular file: name the credential file itself")}
	}
	if kernelFS(f) {
		return nil, &BindingError{Ref: r, Err: errors.New("a file of the kernel (/proc, /sys), not a credential file: name the credential file itself")}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	switch {
	case err != nil:
		return nil, &BindingError{Ref: r, Err: errors.New("file unreadable")}
	case len(b) > MaxFileBytes:
		return nil, &BindingError{Ref: r, Err: errors.New("file larger than " + strconv.Itoa(MaxFileBytes>>10) + " KiB: a credential file holds one credential")}
	case bytes.IndexByte(b, 0) >= 0:
		// No credential format holds a NUL byte; a binary file or a
		// NUL-separated list (an environment) does.
		return nil, &BindingError{Ref: r, Err: errors.New("file holds a NUL byte: a credential file holds one credential as text")}
	}
	return b, nil
}
