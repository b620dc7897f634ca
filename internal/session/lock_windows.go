//go:build windows

package session

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockFile is an exclusive LockFileEx lock held through an open handle;
// Windows releases it when the process exits.
type lockFile struct{ f *os.File }

// tryLock takes an exclusive, fail-immediately lock on path.
func tryLock(path string) (l *lockFile, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	var ol windows.Overlapped
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return &lockFile{f: f}, true, nil
}

func (l *lockFile) unlock() error {
	var ol windows.Overlapped
	windows.UnlockFileEx(windows.Handle(l.f.Fd()), 0, 1, 0, &ol)
	return l.f.Close()
}
