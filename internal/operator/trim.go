package operator

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

// idleTrim is how long the dashboard waits after its last request before
// returning freed memory to the OS: a page builds a few megabytes of
// short-lived rows and HTML, and a dashboard mostly sits idle between
// views (issue 17: idle RSS under 25 MiB).
const idleTrim = 3 * time.Second

// trimmer returns freed heap to the OS once the server has been idle for
// idleTrim after activity.
type trimmer struct {
	last    atomic.Int64 // unix nanoseconds of the last request
	trimmed atomic.Bool
}

func (t *trimmer) touch(now time.Time) {
	t.last.Store(now.UnixNano())
	t.trimmed.Store(false)
}

// maybe trims when idle long enough and not trimmed since the last
// request; the watch loop calls it on every poll.
func (t *trimmer) maybe(now time.Time) {
	if t.trimmed.Load() || now.UnixNano()-t.last.Load() < int64(idleTrim) {
		return
	}
	t.trimmed.Store(true)
	debug.FreeOSMemory()
}
