package cli

import (
	"io"
	"sync/atomic"

	"github.com/coagent8/coagent8/internal/exitstatus"
)

// stdout is the command line's standard output: it notes a write that
// failed because the reader went away (`coagent8 jobs | head -1`), so
// [MainEnv] ends such a command quietly with [exitstatus.BrokenPipe]
// instead of printing the write's error ("write /dev/stdout: broken
// pipe", or an internal error for a command that returned it bare). On
// Unix Go's runtime ends the process with SIGPIPE at that write already;
// this is the same end where the write fails instead (Windows, an
// in-process run).
type stdout struct {
	w    io.Writer
	gone atomic.Bool
}

func (s *stdout) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil && exitstatus.IsBrokenPipe(err) {
		s.gone.Store(true)
	}
	return n, err
}
