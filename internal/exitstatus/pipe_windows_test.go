package exitstatus

import (
	"io/fs"
	"syscall"
	"testing"
)

// TestIsBrokenPipeWindows: the two errors a Windows pipe write returns
// once its reader closed.
func TestIsBrokenPipeWindows(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ERROR_BROKEN_PIPE, errorNoData} {
		if err := (&fs.PathError{Op: "write", Path: "/dev/stdout", Err: errno}); !IsBrokenPipe(err) {
			t.Errorf("IsBrokenPipe(%v) = false", err)
		}
	}
}
