// Package agy drives the Google Antigravity CLI (`agy`) for one read-only
// turn (backends.md §3; ).
//
// # Security model and its limit
//
// agy is always started with --sandbox, the prompt on stdin, the
// workspace as cwd, an allowlisted environment and the stream-json event
// format. That is all coagent8 can do: agy reports no effective policy to
// verify, its --sandbox alone is not a read-only boundary, and agy turns
// are NOT isolated from the external MCP servers and plugins agy inherits
// from its configuration (a documented third-party limitation, R-016).
// Every Result carries [Limitation] as a warning, and [Backend.Doctor]
// names the inherited servers and plugins. Nothing in this package may
// describe an agy turn as isolated.
//
// # Stream
//
// agy exits 0 even on failure, so success is decided from the event stream
// only: exactly one terminal event (a result, an error, or the single-JSON
// dialect) with status SUCCESS, a session id, no denied actions and no
// sandbox-denial evidence on stderr. Unknown event types are tolerated with
// one warning each (AUD-P1-5); a malformed known event is PROTOCOL_ERROR.
package agy

import (
	"context"
	"sync"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/process"
)

// Name is the backend id.
const Name = "agy"

// Limitation is stated in every agy result, the tool description and
// doctor (R-016; wording checked by a golden test).
const Limitation = "agy turns are not isolated from the external MCP servers and plugins agy inherits from its configuration; agy's --sandbox alone is not a read-only boundary, and coagent8 cannot verify agy's effective policy."

// Options configure the backend. The zero value is usable.
type Options struct {
	// APIKeyBilling passes GEMINI_API_KEY through to agy: the user chose
	// API-key billing. Otherwise the key is stripped (backends.md §0).
	APIKeyBilling bool
}

// Backend runs agy turns. It is safe for concurrent use.
type Backend struct {
	env  config.Env
	opts Options

	mu      sync.Mutex
	version probeCache
}

var _ adapter.Backend = (*Backend)(nil)

// New returns an agy backend that locates the CLI (AGY_PATH, GEMINI_PATH,
// else PATH) and its configuration (GEMINI_CLI_HOME, else HOME) from env.
func New(env config.Env, opts Options) *Backend {
	return &Backend{env: env, opts: opts}
}

// Name returns "agy".
func (b *Backend) Name() string { return Name }

// Run executes one turn. Errors are *fault.Error; a Result is returned only
// for a terminal SUCCESS with a session id and no sandbox denial. Every
// Result's Warnings start with [Limitation].
func (b *Backend) Run(ctx context.Context, t adapter.Turn) (adapter.Result, error) {
	inv, err := b.prepare(t)
	if err != nil {
		return adapter.Result{}, err
	}
	p, err := process.Start(ctx, inv.spec)
	if err != nil {
		return adapter.Result{}, err
	}
	s := newStream(t, inv)
	if err := s.consume(p); err != nil {
		p.Kill()
		return adapter.Result{}, p.Classify(err)
	}
	code, why := p.Wait()
	if why != process.EndNone {
		return adapter.Result{}, p.Classify(fault.New(fault.ProcessError, "agy.killed", "agy was stopped."))
	}
	return s.finish(code, p.Stderr())
}
