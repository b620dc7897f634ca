package exitstatus

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"syscall"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

func TestIsBrokenPipe(t *testing.T) {
	stdout := func(err error) error { return &fs.PathError{Op: "write", Path: "/dev/stdout", Err: err} }
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"EPIPE on stdout", stdout(syscall.EPIPE), true},
		{"closed io.Pipe", io.ErrClosedPipe, true},
		{"wrapped by a step", fmt.Errorf("print: %w", stdout(syscall.EPIPE)), true},
		{"cause of a fault", fault.Wrap(fault.ProcessError, "redact.copy", "copying stdin to stdout failed", stdout(syscall.EPIPE)), true},
		{"other write error", stdout(syscall.EIO), false},
		{"disk full", stdout(syscall.ENOSPC), false},
		{"plain", errors.New("broken pipe"), false},
		{"nil", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsBrokenPipe(tt.err); got != tt.want {
				t.Errorf("IsBrokenPipe(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
