// Package crash turns a panic in coagent8's own code into a typed
// PROCESS_ERROR internal.panic for the one call, job or stream it hit.
// The MCP server process also runs the delegate jobs and background turns
// other calls started; the Go runtime ends the whole process on a panic
// nobody recovers, and the MCP Go SDK (v1.8.0) recovers none, neither in
// tool handlers nor in receiving middleware nor in the goroutines
// coagent8 starts. Every such site defers [Guard.Recover] (or starts its
// goroutine with [Guard.Go]) and decides, in its fail function, how its
// own unit of work ends.
package crash

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
)

// Reason is the reason of the PROCESS_ERROR a recovered panic becomes.
const Reason = "internal.panic"

// logBytes bounds the logged panic value and stack.
const logBytes = 16 << 10

// Guard recovers panics: it logs each (value and stack, redacted with the
// diagnostic profile and bounded to 16 KiB, at error level) and hands the
// site a typed error. A nil *Guard is usable: it logs to standard error
// through the diagnostic redactor (packages without a logger of their
// own, such as the gate and the delegation runner).
type Guard struct {
	log  *slog.Logger
	diag *redact.Redactor
}

// Stderr is the Guard of packages without a logger of their own (the
// gate, the sandbox, the egress decider, the delegation runner): a nil
// *Guard, which logs to standard error through the diagnostic redactor.
var Stderr *Guard

// New returns a Guard logging to log after redacting with diag (a
// [redact.NewDiagnostic] redactor; the logger's own handler may redact
// again). It fails with PROCESS_ERROR crash.config when either is nil.
func New(log *slog.Logger, diag *redact.Redactor) (*Guard, error) {
	if log == nil || diag == nil {
		return nil, fault.New(fault.ProcessError, "crash.config", "crash: a logger and a diagnostic redactor are required")
	}
	return &Guard{log: log, diag: diag}, nil
}

// Err is the typed error of a panic in where (a short name of the unit of
// work: a tool, "delegate job", "gate drain"): PROCESS_ERROR
// internal.panic with a message safe to show.
func Err(where string) *fault.Error {
	return fault.New(fault.ProcessError, Reason,
		"coagent8 hit an internal error in "+where+"; nothing else was affected. The log has the details.")
}

// Recover must be deferred directly (defer g.Recover(where, fail)); it
// does nothing unless the goroutine is panicking. Then it stops the
// panic, logs it and calls fail, if set, with [Err](where). fail runs on
// the panicking goroutine after its other deferred calls ran; it must not
// panic itself.
func (g *Guard) Recover(where string, fail func(error)) {
	v := recover()
	if v == nil {
		return
	}
	g.logPanic(where, v, debug.Stack())
	if fail != nil {
		fail(Err(where))
	}
}

// Do runs f under [Guard.Recover](where, fail): a loop that must outlive
// one bad iteration (a watcher's tick) guards each.
func (g *Guard) Do(where string, f func(), fail func(error)) {
	defer g.Recover(where, fail)
	f()
}

// Go runs f on a new goroutine under [Guard.Recover](where, fail).
func (g *Guard) Go(where string, f func(), fail func(error)) {
	go func() {
		defer g.Recover(where, fail)
		f()
	}()
}

func (g *Guard) logPanic(where string, v any, stack []byte) {
	log, diag := g.sinks()
	cause, _ := diag.Bound(fmt.Sprintf("%v\n%s", v, stack), logBytes)
	log.Error("recovered a panic", "in", where, "reason", Reason, "panic", cause)
}

func (g *Guard) sinks() (*slog.Logger, *redact.Redactor) {
	if g != nil {
		return g.log, g.diag
	}
	home, _ := os.UserHomeDir()
	diag := redact.NewDiagnostic(home)
	return slog.New(redact.NewHandler(slog.NewTextHandler(os.Stderr, nil), diag)), diag
}
