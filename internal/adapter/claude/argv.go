package claude

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/process"
)

// invocation is one prepared run: the process spec and what the startup
// report must say.
type invocation struct {
	spec      process.Spec
	sessionID string
	model     string
	backend   *Backend
}

// readOnlyArgs is the fixed restricted profile. Order matters only
// for readability; the test asserts the exact list.
var readOnlyArgs = []string{
	"-p", "--restricted",
	"--tools", "Read,Glob,Grep",
	"--permission-mode", "dontAsk",
	"--permission-prompts", "none",
	"--settings", `{"disableAllHooks":true}`,
	"--strict-mcp-config", "--mcp-config", `{"mcpServers":{}}`,
	"--output-format", "stream-json", "--verbose", "--include-partial-messages",
}

var claudeEfforts = map[string]bool{"low": true, "medium": true, "high": true, "xhigh": true, "max": true}

// argv returns the CLI arguments for a turn. model and sessionID have been
// validated; resume selects --resume over --session-id.
func argv(model, effort, sessionID string, resume bool) []string {
	args := append([]string(nil), readOnlyArgs...)
	args = append(args, "--model", model)
	if effort != "" {
		args = append(args, "--effort", effort)
	}
	if resume {
		return append(args, "--resume", sessionID)
	}
	return append(args, "--session-id", sessionID)
}

func (b *Backend) prepare(ctx context.Context, t adapter.Turn) (invocation, error) {
	model, err := resolveModel(t.Model)
	if err != nil {
		return invocation{}, err
	}
	if t.Effort != "" && !claudeEfforts[t.Effort] {
		return invocation{}, fault.New(fault.CLIUnsupported, "claude.effort",
			"Claude Code supports reasoning_effort low, medium, high, xhigh or max")
	}
	sid, resume, err := sessionFor(t.SessionID)
	if err != nil {
		return invocation{}, err
	}
	// Only resolve the path here: the version is checked from the startup
	// report itself (no extra subprocess per turn, AUD-P1-4) and probed
	// with --version only when a run fails before that report.
	path, _, err := process.Resolve(b.env, "claude", "CLAUDE_PATH")
	if err != nil {
		return invocation{}, err
	}
	spec := process.Spec{
		Path:        path,
		Args:        argv(model, t.Effort, sid, resume),
		Dir:         t.Workspace,
		Env:         b.environ(),
		Stdin:       []byte(t.Prompt),
		Deadline:    orDefault(t.Deadline, adapter.DefaultDeadline),
		IdleTimeout: orDefault(t.IdleTimeout, adapter.DefaultIdleTimeout),
		StderrLimit: adapter.MaxStderrBytes,
	}
	return invocation{spec: spec, sessionID: sid, model: model, backend: b}, nil
}

// resolveModel applies the default and refuses "default" (unknown cost).
func resolveModel(m string) (string, error) {
	if m == "" {
		return DefaultModel, nil
	}
	if err := adapter.ValidModel(m); err != nil {
		return "", err
	}
	if m == "default" {
		return "", fault.New(fault.InvalidInput, "claude.model_default",
			`model "default" is refused: its cost cannot be governed; name a model or omit the field`)
	}
	return m, nil
}

// sessionFor returns the session id to use and whether it is a resume.
// Continuations take a UUID only (backends.md §2).
func sessionFor(native string) (string, bool, error) {
	if native == "" {
		return newUUID(), false, nil
	}
	if !adapter.IsUUID(native) {
		return "", false, fault.New(fault.SessionInvalid, "claude.session_id", "The session cannot be continued.")
	}
	return native, true, nil
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// envAllow are the variables Claude Code needs beyond the base list:
// its config dir, gateway/base-URL settings, alias resolution and cloud
// provider selection. Provider API keys are not here (stripped unless the
// user opted into API billing).
var envAllow = []string{
	"CLAUDE_CONFIG_DIR", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN",
	"ANTHROPIC_DEFAULT_*", "ANTHROPIC_SMALL_FAST_MODEL",
	"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "AWS_REGION", "AWS_PROFILE",
	"CLOUD_ML_REGION", "ANTHROPIC_VERTEX_PROJECT_ID",
}

func (b *Backend) environ() []string {
	allow := append(append([]string(nil), envAllow...), b.testOnlyAllow...)
	if b.opts.APIKeyBilling {
		allow = append(allow, "ANTHROPIC_API_KEY")
	}
	return process.Environ(b.env, allow, map[string]string{
		"DISABLE_AUTOUPDATER": "1",
	})
}
