// Package fault defines coagent8's one error type: a stable machine code, a
// machine-readable reason, a message that is safe to show to the calling
// agent, a retryable flag and an internal cause that is only ever logged
// after diagnostic redaction.
//
// # Two channels
//
// [Error.Error] returns the public message only, so an error that escapes to
// a client by accident never carries the internal cause. The cause is reached
// through [Error.Unwrap] and [Error.Cause] for logs.
//
// Source: contract.md §2 (codes), requirements §0.4 (reasons).
package fault

import (
	"errors"
	"fmt"
	"strconv"
)

// Code is a stable, documented error code (contract.md §2, requirements §0.4).
type Code string

// Error codes. The set is closed: an unknown failure is [ProcessError].
const (
	CLINotFound          Code = "CLI_NOT_FOUND"
	CLIUnsupported       Code = "CLI_UNSUPPORTED"
	AuthRequired         Code = "AUTH_REQUIRED"
	ModelUnavailable     Code = "MODEL_UNAVAILABLE"
	RateLimited          Code = "RATE_LIMITED"
	SessionInvalid       Code = "SESSION_INVALID"
	SessionBusy          Code = "SESSION_BUSY"
	Aborted              Code = "ABORTED"
	Timeout              Code = "TIMEOUT"
	SandboxUnavailable   Code = "SANDBOX_UNAVAILABLE"
	ProtocolError        Code = "PROTOCOL_ERROR"
	BufferLimit          Code = "BUFFER_LIMIT"
	InputLimit           Code = "INPUT_LIMIT"
	InvalidInput         Code = "INVALID_INPUT"
	ProcessError         Code = "PROCESS_ERROR"
	HistoryError         Code = "HISTORY_ERROR"
	HistoryChanged       Code = "HISTORY_CHANGED"
	OnboardingRequired   Code = "ONBOARDING_REQUIRED"
	PolicyDenied         Code = "POLICY_DENIED"
	NestedTurn           Code = "COAGENT8_NESTED_TURN"
	LifecycleUnavailable Code = "LIFECYCLE_UNAVAILABLE"
	Unsupported          Code = "UNSUPPORTED"
)

// Error is the typed error carried end to end. Construct it with [New] or
// [Wrap]; the zero value is not meaningful.
type Error struct {
	// Code is the stable error code.
	Code Code
	// Reason is a dotted machine-readable reason, e.g. "claude.startup_report".
	Reason string
	// Message is safe to show to the calling agent and the user. It must not
	// contain prompt text, credentials or absolute home paths.
	Message string
	// Retryable reports whether the same call may succeed later unchanged.
	Retryable bool
	// Details holds extra machine-readable facts (e.g. "minimum": "2.1.259").
	// Values must be safe to show.
	Details map[string]string

	cause error
}

// New returns an [Error] without an internal cause.
func New(code Code, reason, message string) *Error {
	return &Error{Code: code, Reason: reason, Message: message}
}

// Wrap returns an [Error] whose internal cause is err. The cause is never part
// of [Error.Error]; log it through a redacting logger.
func Wrap(code Code, reason, message string, err error) *Error {
	return &Error{Code: code, Reason: reason, Message: message, cause: err}
}

// Error returns the public message prefixed by the code.
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the internal cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// Cause returns the internal cause, or nil.
func (e *Error) Cause() error { return e.cause }

// WithRetry returns e marked retryable (for chaining at construction).
func (e *Error) WithRetry() *Error { e.Retryable = true; return e }

// With returns e with a detail added (for chaining at construction).
func (e *Error) With(key, value string) *Error {
	if e.Details == nil {
		e.Details = map[string]string{}
	}
	e.Details[key] = value
	return e
}

// Is reports whether target is an *Error with the same Code, so callers can
// write errors.Is(err, fault.New(fault.Timeout, "", "")) or use [HasCode].
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Reason == "" || t.Reason == e.Reason)
}

// From returns err as an *Error. An error that is not one becomes a
// [ProcessError] with reason "internal" whose public message is generic and
// whose cause is err (requirements: unknown failures are PROCESS_ERROR, never
// INPUT_LIMIT). From(nil) is nil.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return Wrap(ProcessError, "internal", "internal error", err)
}

// HasCode reports whether err is or wraps an *Error with code c.
func HasCode(err error, c Code) bool {
	var fe *Error
	return errors.As(err, &fe) && fe.Code == c
}

// maxQuotedInput bounds the runes of user input [QuoteInput] shows.
const maxQuotedInput = 64

// QuoteInput is user input (an id, a flag value, an argument) as a message
// may echo it: at most 64 runes, Go-quoted so that control, format
// (bidirectional) and invalid bytes appear as escapes rather than act on
// the terminal. A longer input is cut and marked with "…" after the
// closing quote.
func QuoteInput(s string) string {
	r := []rune(s)
	if len(r) <= maxQuotedInput {
		return strconv.Quote(s)
	}
	return strconv.Quote(string(r[:maxQuotedInput])) + "…"
}
