package verify

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/coagent8/coagent8/internal/sandbox"
)

// Status is a check's outcome.
type Status string

// Statuses. NotRun is never a pass: the command did not run to completion
// under the sandbox (refused, unsupported platform, cancelled before it
// started).
const (
	Passed Status = "passed"
	Failed Status = "failed"
	NotRun Status = "not_run"
)

// Kind says which State Envelope CHECKS claim a command corresponds to.
type Kind string

// Kinds, guessed from the command line by [KindOf].
const (
	KindTests     Kind = "tests"
	KindTypecheck Kind = "typecheck"
	KindOther     Kind = "other"
)

// Check is one configured command's result.
type Check struct {
	// Command is the argv that ran; argv[0] is the canonical path.
	Command []string `json:"command"`
	Kind    Kind     `json:"kind"`
	Status  Status   `json:"status"`
	// Exit is the sandbox exit classification (exited, signalled,
	// timed_out, out_of_memory, cancelled, output_limit, disk_limit, uncertain);
	// "" when the check did not run.
	Exit string `json:"exit,omitempty"`
	// ExitCode is the exit status when Exit is "exited", else -1.
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	// DurationMS is the wall time of the sandboxed run in milliseconds.
	DurationMS float64 `json:"duration_ms"`
	// Reason says why a check did not run (a sandbox refusal's message
	// and reason code).
	Reason string `json:"reason,omitempty"`
	// StdoutTail and StderrTail are the last bytes of each stream
	// (at most [TailBytes]), redacted with the diagnostic profile.
	StdoutTail string `json:"stdout_tail"`
	StderrTail string `json:"stderr_tail"`
	// Receipt summarizes the containment receipt; nil when nothing ran.
	Receipt *Receipt `json:"receipt,omitempty"`
}

// Receipt is the part of a sandbox receipt a review shows.
type Receipt struct {
	JobID string `json:"job_id"`
	// Profile is the sandbox profile the check ran in: "task" for a
	// review's check on a copy of the workspace, "verify" on a delegated
	// job's candidate.
	Profile      string           `json:"profile,omitempty"`
	PolicyDigest string           `json:"policy_digest"`
	BinaryDigest string           `json:"binary_digest"`
	Requested    sandbox.Limits   `json:"limits_requested"`
	Observed     sandbox.Observed `json:"limits_observed"`
	TreeEmpty    bool             `json:"tree_empty"`
}

func receiptOf(r sandbox.Receipt) *Receipt {
	return &Receipt{JobID: r.JobID, Profile: r.Profile, PolicyDigest: r.PolicyDigest, BinaryDigest: r.BinaryDigest,
		Requested: r.Requested, Observed: r.Observed, TreeEmpty: r.TreeEmpty}
}

// Display returns the command as a user would type it: the program's base
// name and the arguments, quoted where needed ("go test ./...").
func (c Check) Display() string {
	if len(c.Command) == 0 {
		return ""
	}
	parts := []string{filepath.Base(c.Command[0])}
	for _, a := range c.Command[1:] {
		if a == "" || strings.ContainsAny(a, " \t\"'\\$`") {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// Outcome describes how the check ended in words: "exited 1", "passed",
// "timed out", "was not run: <reason>".
func (c Check) Outcome() string {
	switch {
	case c.Status == NotRun:
		return "was not run: " + c.Reason
	case c.Status == Passed:
		return "passed"
	case c.Exit == sandbox.ExitExited.String():
		return "exited " + strconv.Itoa(c.ExitCode)
	case c.Exit == sandbox.ExitSignalled.String():
		return "was killed by " + c.Signal
	}
	return "ended " + strings.ReplaceAll(c.Exit, "_", " ")
}

var (
	testWords  = []string{"test", "tests", "pytest", "jest", "vitest", "ctest", "mocha", "rspec", "phpunit", "tox", "nox"}
	checkWords = []string{"vet", "build", "check", "typecheck", "type-check", "lint", "tsc", "mypy", "pyright",
		"compile", "golangci-lint", "eslint", "staticcheck"}
)

// KindOf guesses which envelope claim argv verifies: tests when the program
// or an argument is a test word ("go test", "pytest", "npm run test:unit"),
// typecheck for build/vet/lint/type checkers, else other.
func KindOf(argv []string) Kind {
	words := []string{strings.ToLower(filepath.Base(argv[0]))}
	for _, a := range argv[1:] {
		w, _, _ := strings.Cut(strings.ToLower(a), ":")
		words = append(words, w)
	}
	for _, w := range words {
		if slices.Contains(testWords, w) {
			return KindTests
		}
	}
	for _, w := range words {
		if slices.Contains(checkWords, w) {
			return KindTypecheck
		}
	}
	return KindOther
}
