// Package exitstatus defines coagent8's process exit statuses and prints
// the two kinds of error that choose their own status: a typed
// [fault.Error] and an [Error] carrying a command's own status. The
// command line (package cli) and the `sandbox run` fast path (package
// sandboxrun) report through it, so both print the same thing.
package exitstatus

import (
	"errors"
	"fmt"
	"io"

	"github.com/coagent8/coagent8/internal/fault"
)

// Exit statuses.
const (
	OK      = 0
	Failure = 1 // the operation ran and failed (typed error printed)
	Usage   = 2 // bad flags or arguments
	Refused = 3 // refused by policy or an unavailable sandbox
)

// Error makes the process exit with Code after printing Msg (if any) as
// "coagent8: Msg". It is for commands whose status carries meaning of its
// own, such as `sandbox run` passing on the sandboxed command's.
type Error struct {
	Code int
	Msg  string
}

func (e Error) Error() string { return e.Msg }

// ForFault is the exit status of a refusal or failure with code c.
func ForFault(c fault.Code) int {
	switch c {
	case fault.PolicyDenied, fault.SandboxUnavailable, fault.NestedTurn:
		return Refused
	case fault.InvalidInput, fault.InputLimit, fault.OnboardingRequired:
		// ONBOARDING_REQUIRED is a missing argument: several backends are
		// installed and the call named none (--backend).
		return Usage
	}
	return Failure
}

// Report prints err for the terminal on w and returns its exit status when
// err is (or wraps) an [Error] or a *fault.Error; ok is false for any other
// error, which the caller reports itself.
func Report(w io.Writer, err error) (code int, ok bool) {
	var xe Error
	var fe *fault.Error
	switch {
	case errors.As(err, &xe):
		if xe.Msg != "" {
			fmt.Fprintf(w, "coagent8: %s\n", xe.Msg)
		}
		return xe.Code, true
	case errors.As(err, &fe):
		fmt.Fprintf(w, "coagent8: error [%s] %s (reason: %s)\n", fe.Code, fe.Message, fe.Reason)
		return ForFault(fe.Code), true
	}
	return 0, false
}
