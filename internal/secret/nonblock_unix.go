//go:build unix

package secret

import "syscall"

// nonBlock guards the race between ReadFile's Stat and its Open (the path
// swapped for a FIFO in between): the open does not wait for a writer,
// and the opened file's own Stat then refuses it (red team 3).
const nonBlock = syscall.O_NONBLOCK
