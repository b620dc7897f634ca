package governor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math/big"
	"runtime"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/turn"
)

// Per-turn grant budget of a read-only turn in the kernel read profile
// (issue 15 scope 8). A consult's CLI makes one model request per tool
// round; the token budget bounds the whole turn, and the USD budget is
// that token budget priced at the approved model's rate (the catalog's
// output price, charged for every token class: an upper bound), or at
// governance's ask-above price when the model is unpriced (the most a
// model admitted without asking may cost).
const (
	turnRequests = 64
	turnTokens   = 2_000_000
	// turnGrace extends the grant past the turn's deadline, so a last
	// stream settles before the grant expires.
	turnGrace = time.Minute
)

// Containment is which containment a backend's read-only turns get on
// this host, and why (the doctor's containment section).
type Containment struct {
	Backend string `json:"backend"`
	// Kind is "kernel" or "profile".
	Kind   string `json:"containment"`
	Reason string `json:"reason"`
}

// Containment reports, per installed backend, the containment its
// read-only turns get on this host and why. It opens the delegation
// runtime (gate, sandbox, the qualified CLI) when a gate credential is
// configured, so the answer is the one a turn would get.
func (g *Governor) Containment(ctx context.Context) []Containment {
	cfg, _ := g.loadConfig()
	var out []Containment
	for _, b := range g.runner.Backends() {
		kernel, reason := g.kernelFor(ctx, cfg, b.Name())
		c := Containment{Backend: b.Name(), Kind: adapter.ContainmentProfile, Reason: reason}
		if kernel != nil {
			c.Kind = adapter.ContainmentKernel
		}
		out = append(out, c)
	}
	return out
}

// kernelRuntime is what a kernel turn of Claude Code runs on, opened once
// per process (qualifying the pinned CLI runs it in the sandbox).
type kernelRuntime struct {
	deps DelegateDeps
	rt   delegation.Runtime
}

// kernelState caches the qualified runtime; a failure is retried by the
// next turn (the user may fix the host meanwhile).
type kernelState struct {
	mu sync.Mutex
	ok *kernelRuntime
}

// kernelFor returns the runtime a turn of backend runs on in the kernel
// read profile, or nil and the reason it runs in the CLI's profile.
// Codex stays on its verified profile: its read-only sandbox cannot run
// nested inside the kernel boundary, where every command fails while its
// thread still reports readOnly (notes/delegation.md §3), so a nested
// report would be untrue.
func (g *Governor) kernelFor(ctx context.Context, cfg config.File, backend string) (*kernelRuntime, string) {
	switch {
	case backend == "codex":
		return nil, "Codex's own read-only sandbox cannot run nested inside coagent8's kernel sandbox (its commands fail while it still reports readOnly), so Codex turns keep its verified read-only profile"
	case backend != "claude":
		return nil, "no kernel read profile for " + backend + " in this version"
	case runtime.GOOS != "linux":
		return nil, "the kernel sandbox needs Linux; this host is " + runtime.GOOS
	}
	creds, err := cfg.GateCredentials()
	if err != nil {
		return nil, "the gate credentials of the coagent8 configuration are unusable: " + err.Error()
	}
	if creds[string(gate.Anthropic)] == "" {
		return nil, "no gate credential configured for anthropic (set gate.credentials.anthropic to env:NAME or file:/abs/path)"
	}
	k, err := g.kernelRuntime(ctx)
	if err != nil {
		return nil, "the kernel sandbox is unavailable on this host: " + fault.From(err).Message
	}
	return k, "the CLI runs in coagent8's kernel sandbox (read profile): the workspace read-only, the provider gate its only network, a phantom credential of a per-turn grant"
}

func (g *Governor) kernelRuntime(ctx context.Context) (*kernelRuntime, error) {
	g.kernel.mu.Lock()
	defer g.kernel.mu.Unlock()
	if k := g.kernel.ok; k != nil {
		if k.deps.Runner.Qualified(k.rt) == nil {
			return k, nil
		}
		g.kernel.ok = nil // the CLI changed (an upgrade): resolve and qualify it again
	}
	deps, err := g.deps(ctx)
	if err != nil {
		return nil, err
	}
	rt, err := deps.Runtime(ctx, "claude")
	if err != nil {
		return nil, err
	}
	g.kernel.ok = &kernelRuntime{deps: deps, rt: rt}
	return g.kernel.ok, nil
}

// contain chooses the containment of an admitted turn (treq.Model is the
// approved concrete model, rate its price per million tokens). For the
// kernel read profile it creates the per-turn grant and sets
// treq.Launcher; the returned function revokes the grant when the turn
// has ended. A continued session runs where its CLI session lives
// ([Governor.containContinued]): in the read profile, resumed from the
// state kept under its handle, when its first turn ran there; on the
// host otherwise.
func (g *Governor) contain(ctx context.Context, cfg config.File, treq *turn.Request, rate *big.Rat) (func(), error) {
	if host, err := g.containContinued(treq); host || err != nil {
		return func() {}, err
	}
	k, reason := g.kernelFor(ctx, cfg, treq.Backend)
	treq.ContainmentReason = reason
	if k == nil {
		return func() {}, g.kernelSessionUnavailable(treq, reason)
	}
	deadline := treq.Timeout
	if deadline <= 0 {
		deadline = adapter.DefaultDeadline
	}
	gr, phantom, err := k.deps.Gate.Grant(ctx, gate.Spec{Provider: gate.Anthropic, Model: treq.Model, Job: turnGrantJob(),
		TTL: deadline + turnGrace, Secret: k.deps.Secret, MaxRequests: turnRequests, MaxTokens: turnTokens,
		MaxSpend: turnSpend(rate), Price: gatePrice(rate), OutputCeiling: jobOutputCeiling})
	if err != nil {
		return nil, err
	}
	revoke := func() { _ = k.deps.Gate.Revoke(context.WithoutCancel(ctx), gr.ID) }
	l, err := k.deps.Runner.ReadLauncher(delegation.ReadTurn{Runtime: k.rt, Phantom: phantom,
		PhantomVar: delegation.PhantomVar(k.deps.Gate), Gate: k.deps.Gate, Reuse: reused(treq)})
	if err != nil {
		revoke()
		return nil, err
	}
	treq.Launcher = l
	if treq.SessionHandle != "" {
		treq.ContainmentReason += "; the session continues there, the CLI resuming its own session from the state kept under the session handle"
	}
	bindSession(treq, l)
	return revoke, nil
}

// turnSpend is the USD budget of one turn: its token budget at rate.
func turnSpend(rate *big.Rat) gate.NanoUSD {
	f, _ := rate.Float64()
	return gate.USD(f * turnTokens / 1e6)
}

// turnRate is the rate a turn's grant is priced at: the decision's price,
// else the ask-above limit in force.
func turnRate(price, askAbove *big.Rat) *big.Rat {
	if price != nil && price.Sign() > 0 {
		return price
	}
	if askAbove != nil && askAbove.Sign() > 0 {
		return askAbove
	}
	return big.NewRat(20, 1) // policy's default ask-above price
}

func turnGrantJob() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "turn-" + hex.EncodeToString(b)
}
