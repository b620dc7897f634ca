// Package adapter defines how coagent8 drives one coding-agent CLI for one
// read-only turn, and what every backend must verify before its answer is
// trusted.
//
// # Security model
//
// A [Backend] starts its CLI only through [process] supervision (no shell,
// explicit path, allowlisted environment, whole-tree teardown), verifies the
// CLI's own report of its effective profile before any answer text is
// accepted, and fails closed with
// fault.SandboxUnavailable otherwise. No field of [Turn] can add CLI flags or
// relax the profile: models and session ids are validated before they
// reach argv.
//
// Subpackages (claude, codex, agy) implement Backend; adaptertest holds the
// shared fakes.
package adapter

import (
	"context"
	"time"

	"github.com/coagent8/coagent8/internal/adapter/jsonl"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
)

// Turn is one read-only request to a backend. The caller has validated the
// workspace (absolute, canonical, existing directory) and the prompt size.
type Turn struct {
	// Prompt is the full prompt text, at most [MaxPromptBytes] of UTF-8. It is
	// written to the CLI's stdin, never argv.
	Prompt string
	// Workspace is the canonical absolute workspace directory (cwd of the CLI).
	Workspace string
	// Model is the requested model id ("" = the backend's default). It has
	// passed [ValidModel].
	Model string
	// Effort is the requested reasoning effort ("" = default).
	Effort string
	// SessionID is the backend-native session/thread id to resume; "" starts
	// a new one.
	SessionID string
	// Deadline is the absolute time budget of the turn (0 = DefaultDeadline).
	Deadline time.Duration
	// IdleTimeout ends a turn whose CLI produced no output for this long
	// (0 = DefaultIdleTimeout).
	IdleTimeout time.Duration
	// OutputSchema, if non-nil, is a JSON Schema the final answer must meet
	// (review envelopes). Backends that cannot enforce it ignore it.
	OutputSchema map[string]any
	// Observer receives streaming events; nil means none. It must not block.
	Observer Observer
	// CheckModel, if non-nil, is called with the model the backend reports
	// it runs (startup report, thread result, reroute) before any answer is
	// accepted; an error refuses the turn (R-039, consent.model_mismatch).
	CheckModel func(reported string) error
	// Launcher, if non-nil, starts the CLI (the kernel sandbox's read
	// profile, chosen by governance); nil starts it on the host. A
	// backend without a kernel profile ignores it and reports
	// [ContainmentProfile].
	Launcher Launcher
}

// Observer receives live events of a running turn (progress, history).
type Observer interface {
	// Delta is a fragment of answer text, in order. It is not redacted yet.
	Delta(text string)
	// Activity reports a tool start/finish or a status line (no content).
	Activity(kind, name string)
	// Warning reports a non-fatal problem (e.g. an unknown event type).
	Warning(msg string)
}

// Usage is the token usage a backend reported. Zero means unknown.
type Usage struct {
	InputTokens  int64   `json:"inputTokens"`
	OutputTokens int64   `json:"outputTokens"`
	CostUSD      float64 `json:"costUsd,omitempty"`
}

// Result is a completed turn. A Result is only returned when the profile was
// verified and the CLI reported a terminal success.
type Result struct {
	// Text is the assistant's final answer (thinking and tool I/O dropped),
	// not yet redacted or bounded: at most [MaxAnswerBytes].
	Text string
	// Truncated reports that Text is only the leading part of a longer
	// answer (cut to [MaxAnswerBytes] as it was read). Its end may cut a
	// credential in two, so the caller redacts it as a prefix, never as a
	// whole text (R-053, issue 19 item 6).
	Truncated bool
	// SessionID is the backend-native id to continue this conversation.
	SessionID string
	// Model is the model the backend reported running.
	Model string
	// ToolCount is the number of tool invocations observed.
	ToolCount int
	// Usage is the reported token usage.
	Usage Usage
	// Warnings are non-fatal notices (unknown events, limitations).
	Warnings []string
	// Verified describes the profile verification that admitted this turn,
	// e.g. "claude.startup_report: tools=[Glob Grep Read] mcp=[] mode=dontAsk".
	Verified string
	// Containment is [ContainmentKernel] when the turn ran in the kernel
	// sandbox's read profile, else [ContainmentProfile].
	Containment string
}

// Probe is a metadata-only check of a backend: it never sends a prompt.
type Probe struct {
	Backend    string   `json:"backend"`
	Installed  bool     `json:"installed"`
	Path       string   `json:"path,omitempty"`
	Searched   []string `json:"searched,omitempty"`
	Version    string   `json:"version,omitempty"`
	Supported  bool     `json:"supported"`
	MinVersion string   `json:"minVersion,omitempty"`
	// AuthStatus is authenticated | unauthenticated | unknown.
	AuthStatus   string      `json:"authStatus"`
	AuthMethod   string      `json:"authMethod,omitempty"`
	AuthEvidence []string    `json:"authEvidence,omitempty"`
	DefaultModel string      `json:"defaultModel,omitempty"`
	Limitations  []string    `json:"limitations,omitempty"`
	Error        *ProbeError `json:"error,omitempty"`
}

// ProbeError is a probe failure in public form.
type ProbeError struct {
	Code    string `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Backend drives one CLI. Implementations are safe for concurrent turns.
type Backend interface {
	// Name is the stable backend id: "claude", "codex" or "agy".
	Name() string
	// Probe reports installation, version and auth by metadata only.
	Probe(ctx context.Context) Probe
	// Run executes one verified read-only turn. Errors are *fault.Error.
	Run(ctx context.Context, t Turn) (Result, error)
}

// Limits from contract.md §7.
const (
	MaxPromptBytes = 4 << 20
	// MaxRecordBytes is the longest stdout record read verbatim; a longer
	// one is reduced as it streams ([RecordLimits]), never held whole.
	MaxRecordBytes = 512 << 10
	// MaxAnswerBytes is how much answer text a backend keeps: the public
	// bound (1 MiB) plus twice [redact.MaxHold], so that redacting the kept
	// prefix is final well past the bound (what could still become a
	// secret is at most MaxHold bytes long).
	MaxAnswerBytes = 1<<20 + 2*redact.MaxHold
	// MaxReducedBytes bounds one reduced record: room for an answer string
	// even if every character were a six-byte escape, and its siblings.
	MaxReducedBytes    = 8 << 20
	MaxStderrBytes     = 512 << 10
	DefaultDeadline    = 900 * time.Second
	DefaultIdleTimeout = 300 * time.Second
)

// RecordLimits are the limits every backend reads its CLI's stdout with:
// records up to [MaxRecordBytes] verbatim, longer ones reduced with string
// values clipped to [MaxAnswerBytes] (issue 19 item 6). A backend refuses
// a reduced record it must verify (a startup report, a thread policy).
func RecordLimits() jsonl.Limits {
	return jsonl.Limits{Record: MaxRecordBytes, String: MaxAnswerBytes, Budget: MaxReducedBytes, Depth: 64}
}

// ValidModel returns an INVALID_INPUT error unless id is a plausible model
// id (backends.md §0; AUD-P1-6: "--yolo" must never reach argv).
func ValidModel(id string) error {
	if !validModel(id) {
		return fault.New(fault.InvalidInput, "model.invalid",
			"model id must match ^[A-Za-z0-9][A-Za-z0-9._:/\\[\\]-]{0,127}$")
	}
	return nil
}

// Efforts is the set of reasoning efforts any backend may accept.
var efforts = map[string]bool{"none": true, "minimal": true, "low": true, "medium": true, "high": true, "xhigh": true, "max": true}

// ValidEffort returns an INVALID_INPUT error unless e is a known effort.
func ValidEffort(e string) error {
	if !efforts[e] {
		return fault.New(fault.InvalidInput, "effort.invalid",
			"reasoning_effort must be one of none, minimal, low, medium, high, xhigh, max")
	}
	return nil
}

// Resolution is the outcome of a metadata-only profile check.
type Resolution struct {
	// Model is the concrete model the CLI reports it would run for the
	// requested id or alias ("" request = its default).
	Model string `json:"model"`
	// Verified summarises the verified profile report.
	Verified string `json:"verified"`
}

// Resolver is implemented by backends that can verify their read-only
// profile and resolve the concrete model without sending a prompt (seed
// 000 §2 allows such metadata-only probes before consent). Doctor and
// governance use it.
type Resolver interface {
	Resolve(ctx context.Context, workspace, model string) (Resolution, error)
}
