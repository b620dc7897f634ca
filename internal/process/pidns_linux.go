//go:build linux

package process

import (
	"errors"
	"sync/atomic"
	"syscall"
)

// refused is set once the kernel refused a new PID (or user) namespace;
// later starts go straight to the process-group fallback. There is no
// probe process: the first real start tells.
var refused atomic.Bool

func isolate() bool { return !refused.Load() }

func noIsolation() { refused.Store(true) }

// isolationRefused reports whether a start failed because the namespace
// flags were refused (permissions, limits, or an unsupported kernel).
func isolationRefused(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS)
}
