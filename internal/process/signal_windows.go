//go:build windows

package process

import "syscall"

// signalName is the signal's description (Windows has no signal names).
func signalName(s syscall.Signal) string { return s.String() }
