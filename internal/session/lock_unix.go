//go:build !windows

package session

import (
	"errors"
	"os"
	"syscall"
)

// lockFile is an exclusive advisory lock held through an open file. The
// kernel drops it when the process exits, however it exits.
type lockFile struct{ f *os.File }

// tryLock takes an exclusive non-blocking flock on path (created 0600).
// ok is false when another open file description holds it.
func tryLock(path string) (l *lockFile, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return &lockFile{f: f}, true, nil
}

func (l *lockFile) unlock() error {
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	return l.f.Close()
}
