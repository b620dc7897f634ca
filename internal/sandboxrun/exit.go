package sandboxrun

import (
	"fmt"
	"time"

	"github.com/coagent8/coagent8/internal/exitstatus"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// Exit statuses `sandbox run` uses when the command did not exit by itself,
// following the shells' 128+N and coreutils timeout(1).
const (
	exitTimedOut  = 124
	exitSignalled = 128
	sigKill       = 9 // the supervisor's kill (memory, output)
	sigInt        = 2 // a cancelled run: coagent8 itself was interrupted
)

// exitFor maps the receipt's exit to the command's result: nil when
// the command exited 0, else an exitstatus.Error carrying the status a shell
// would show for the same command run directly. A tree the supervisor
// could not confirm gone stays a PROCESS_ERROR: that is the sandbox
// failing, not the command. interrupted is 128+N when coagent8 itself was
// ended by signal N (exitstatus.SignalStatus), else 0: a cancelled run
// exits with it, as the shell would for the command.
func exitFor(r sandbox.Receipt, interrupted int) error {
	e := r.Exit
	killed := func(def int) int {
		if n := signalNumber(e.Signal); n > 0 {
			return exitSignalled + n
		}
		return exitSignalled + def
	}
	switch e.Class {
	case sandbox.ExitExited:
		if e.Code == 0 {
			return nil
		}
		return exitstatus.Error{Code: e.Code, Msg: fmt.Sprintf("sandboxed command exited with status %d", e.Code)}
	case sandbox.ExitSignalled:
		return exitstatus.Error{Code: killed(sigKill), Msg: "sandboxed command was killed by " + signalLabel(e.Signal)}
	case sandbox.ExitTimedOut:
		return exitstatus.Error{Code: exitTimedOut, Msg: "sandboxed command timed out after " + r.Requested.Wall.Round(time.Millisecond).String() + " (--timeout)"}
	case sandbox.ExitOutOfMemory:
		return exitstatus.Error{Code: killed(sigKill), Msg: fmt.Sprintf("sandboxed command ran out of memory (%d MiB, --memory-mb) and was killed", r.Requested.Memory>>20)}
	case sandbox.ExitOutputLimit:
		return exitstatus.Error{Code: killed(sigKill), Msg: fmt.Sprintf("sandboxed command wrote more than %d MiB of output (--output-mb) and was stopped", r.Requested.Output>>20)}
	case sandbox.ExitDiskLimit:
		return exitstatus.Error{Code: killed(sigKill), Msg: fmt.Sprintf("sandboxed command's writes took more than %d MiB of the disk, or left it under %d MiB free, and it was stopped", r.Requested.Disk>>20, sandbox.MinFreeDisk>>20)}
	case sandbox.ExitCancelled:
		code := killed(sigInt)
		if interrupted > 0 {
			code = interrupted
		}
		return exitstatus.Error{Code: code, Msg: "sandboxed command was cancelled"}
	}
	return fault.New(fault.ProcessError, "sandbox."+e.Class.String(),
		"the sandbox could not confirm that the command's processes are gone; see the receipt")
}

// signalLabel is the signal's name, or "a signal" when none was observed.
func signalLabel(name string) string {
	if name == "" {
		return "a signal"
	}
	return name
}
