package agy

import (
	"fmt"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/process"
)

// invocation is one prepared run.
type invocation struct {
	spec    process.Spec
	resume  string // the conversation id asked for, "" for a new one
	model   string
	timeout time.Duration
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// agyEfforts are the efforts agy accepts; others are CLI_UNSUPPORTED.
var agyEfforts = []string{"low", "medium", "high", "xhigh", "max"}

// printTimeoutMargin keeps agy's own print timeout (a Go duration flag)
// above our deadline, so our supervisor, not agy's silent exit 0 with a
// partial answer, ends a long turn (backends.md §3).
const printTimeoutMargin = time.Minute

// argv returns the CLI arguments: --sandbox always first.
func argv(workspace, model, effort, conversation string, deadline time.Duration) []string {
	args := []string{"--sandbox", "--output-format", "stream-json"}
	if workspace != "" {
		args = append(args, "--add-dir", workspace)
	}
	if model != "" {
		args = append(args, "--model", model)
	}
	if effort != "" {
		args = append(args, "--effort", effort)
	}
	if conversation != "" {
		args = append(args, "--conversation", conversation)
	}
	secs := int64((deadline + printTimeoutMargin).Seconds())
	return append(args, "--print-timeout", fmt.Sprintf("%ds", secs))
}

func (b *Backend) prepare(t adapter.Turn) (invocation, error) {
	model, effort, err := modelEffort(t.Model, t.Effort)
	if err != nil {
		return invocation{}, err
	}
	if t.SessionID != "" && !adapter.IsUUID(t.SessionID) {
		return invocation{}, fault.New(fault.SessionInvalid, "agy.session_id", "The session cannot be continued.")
	}
	path, _, err := process.Resolve(b.env, "agy", "AGY_PATH", "GEMINI_PATH")
	if err != nil {
		return invocation{}, err
	}
	deadline := orDefault(t.Deadline, adapter.DefaultDeadline)
	spec := process.Spec{
		Path:        path,
		Args:        argv(t.Workspace, model, effort, t.SessionID, deadline),
		Dir:         t.Workspace,
		Env:         b.environ(),
		Stdin:       []byte(t.Prompt),
		Deadline:    deadline,
		IdleTimeout: orDefault(t.IdleTimeout, adapter.DefaultIdleTimeout),
		StderrLimit: adapter.MaxStderrBytes,
	}
	return invocation{spec: spec, resume: t.SessionID, model: model}, nil
}

// modelEffort validates both before they reach argv (AUD-P1-6) and applies
// the suffix rule: with both given, a trailing -<effort> is stripped from
// the model ("gemini-3.8-flash-high" + "low" → "gemini-3.8-flash", "low").
func modelEffort(model, effort string) (string, string, error) {
	if model != "" {
		if err := adapter.ValidModel(model); err != nil {
			return "", "", err
		}
	}
	if effort == "" {
		return model, "", nil
	}
	if !contains(agyEfforts, effort) {
		return "", "", fault.New(fault.CLIUnsupported, "agy.effort",
			"agy supports reasoning_effort low, medium, high, xhigh or max")
	}
	for _, e := range agyEfforts {
		if base, ok := strings.CutSuffix(model, "-"+e); ok && base != "" {
			return base, effort, nil
		}
	}
	return model, effort, nil
}

// environ is the allowlisted child environment (backends.md §0).
func (b *Backend) environ() []string {
	extra := []string{"GEMINI_CLI_HOME", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"}
	if b.opts.APIKeyBilling {
		extra = append(extra, "GEMINI_API_KEY")
	}
	return process.Environ(b.env, extra, nil)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
