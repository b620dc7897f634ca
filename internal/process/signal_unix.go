//go:build unix

package process

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// signalName is the signal's constant name, e.g. "SIGKILL".
func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return s.String()
}
