package exitstatus

import (
	"errors"
	"syscall"
)

// errorNoData is ERROR_NO_DATA, which a write to a pipe whose reader
// closed returns (syscall does not name it; os/exec defines it the same
// way for the same reason).
const errorNoData = syscall.Errno(0xe8)

func brokenPipeOS(err error) bool {
	return errors.Is(err, syscall.ERROR_BROKEN_PIPE) || errors.Is(err, errorNoData)
}
