//go:build unix

package admission

import (
	"os"
	"syscall"
)

// lockPending opens (creating) path and takes an exclusive, non-blocking
// flock on it. It reports false, with no error, when another live process
// holds it: that process's admission is in progress. The lock dies with
// its process, so a kill -9 frees it for recovery.
func lockPending(path string) (*os.File, bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, false, nil
		}
		return nil, false, err
	}
	return f, true, nil
}
