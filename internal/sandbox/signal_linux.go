//go:build linux && amd64

package sandbox

import (
	"os/signal"
	"syscall"
)

// ignoreTermination makes a probe daemon ignore SIGTERM and SIGHUP like a
// hostile survivor would.
func ignoreTermination() { signal.Ignore(syscall.SIGTERM, syscall.SIGHUP) }
