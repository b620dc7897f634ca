// Package claude drives the Claude Code CLI (`claude -p`) for one verified
// read-only turn.
//
// # Profile and verification
//
// The argv is fixed ([argv]): --restricted, only the Read, Glob and Grep
// tools, permission mode dontAsk with prompts off, hooks disabled, and a
// strict MCP configuration with zero servers; never --bare and
// never --fallback-model (silent model swap). The first stream event must
// be the CLI's own startup report (system/init) and must report exactly
// those tools, no MCP server, permission mode dontAsk and only built-in
// plugins; anything else — including output before it — ends the process
// tree and refuses the turn with SANDBOX_UNAVAILABLE reason
// "claude.startup_report". Hook activity aborts the turn.
//
// Failures are typed from the stream (assistant error category, API
// status, errors[] prefix), never from stderr (backends.md §2).
//
// # Records and models
//
// Stdout is read with [jsonl] at [adapter.RecordLimits]: the startup report
// must fit [adapter.MaxRecordBytes] as written; a longer record is reduced
// as it streams, its answer kept to [adapter.MaxAnswerBytes] (then
// Result.Truncated), and one whose structure had to be cut fails the turn
// unless it is a tool result, which is never read. Every record that names
// the answering model (assistant, message_start) must name the startup
// report's, else POLICY_DENIED consent.model_mismatch.
package claude

import (
	"context"
	"sync"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
)

// Name is the backend id.
const Name = "claude"

// MinVersion is the oldest Claude Code with --restricted (2.1.248) and
// --permission-prompts (2.1.259) (backends.md §2).
const MinVersion = "2.1.259"

// DefaultModel is used when the caller names none (backends.md §2).
const DefaultModel = "sonnet"

// Options configure the backend. The zero value is usable.
type Options struct {
	// APIKeyBilling passes ANTHROPIC_API_KEY through to the CLI: the user
	// chose API-key billing (config). Otherwise the key is stripped.
	APIKeyBilling bool
	// CacheDir, if set, keeps resolved model aliases across processes
	// (metadata only; see modelcache.go).
	CacheDir string
}

// Backend runs Claude Code turns. It is safe for concurrent use.
type Backend struct {
	env  config.Env
	opts Options

	mu    sync.Mutex
	cache probeCache

	// testOnlyAllow extends the env allowlist so test fakes get their
	// control variables; never set outside tests.
	testOnlyAllow []string
}

var _ adapter.Backend = (*Backend)(nil)

// New returns a Claude Code backend reading its executable location and
// environment from env.
func New(env config.Env, opts Options) *Backend {
	return &Backend{env: env, opts: opts}
}

// Name returns "claude".
func (b *Backend) Name() string { return Name }

// Run executes one verified read-only turn. Errors are *fault.Error.
func (b *Backend) Run(ctx context.Context, t adapter.Turn) (adapter.Result, error) {
	inv, err := b.prepare(ctx, t)
	if err != nil {
		return adapter.Result{}, err
	}
	p, err := adapter.Start(ctx, t.Launcher, inv.spec)
	if err != nil {
		return adapter.Result{}, err
	}
	res, err := consume(p, inv, t)
	if err != nil {
		p.Kill()
		return adapter.Result{}, p.Classify(err)
	}
	p.Wait()
	if err := adapter.Refused(p); err != nil {
		return adapter.Result{}, err // the sandbox refused the run after its result
	}
	res.Containment = adapter.ContainmentProfile
	if t.Launcher != nil {
		res.Containment = t.Launcher.Containment()
		res.Verified += " containment=" + res.Containment
	}
	return res, nil
}
