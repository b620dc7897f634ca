//go:build !unix && !windows

package config

import "github.com/coagent8/coagent8/internal/fault"

// lockFile is unsupported here: without a file lock, concurrent remembers
// could lose an id, so the write is refused instead.
func lockFile(string) (func(), error) {
	return nil, fault.New(fault.Unsupported, "config.lock_unsupported", "config file locking is not supported on this platform")
}

func syncDir(string) {}
