package exitstatus

import (
	"errors"
	"io"
	"syscall"
)

// BrokenPipe is the status of a command whose stdout's reader went away
// (`coagent8 audit | head -1`): 128+13, what a shell reports for the
// SIGPIPE that ends a Unix process writing to it. Go's runtime raises that
// signal itself on a write to fd 1 or 2 (os/signal, "SIGPIPE"); where the
// write fails instead (Windows has no SIGPIPE; the streams of an
// in-process run are no fds) the command line returns this status, so
// both end the same way: quietly.
const BrokenPipe = 128 + 13

// IsBrokenPipe reports whether err is a write to a pipe or socket whose
// reader is gone: EPIPE, [io.ErrClosedPipe] or, on Windows,
// ERROR_BROKEN_PIPE and ERROR_NO_DATA ("the pipe is being closed").
func IsBrokenPipe(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe) || brokenPipeOS(err)
}
