//go:build unix

package config

import "syscall"

// nonBlock guards the race between Stat and Open (the file swapped for a
// FIFO in between): the open does not wait for a writer.
const nonBlock = syscall.O_NONBLOCK
