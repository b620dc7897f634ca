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
	"github.com/coagent8/coagent8/internal/secret"
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
	// ReasonCode is Reason as one of the Contain* codes.
	ReasonCode string `json:"reasonCode"`
}

// Why a backend's read-only turns get the containment they get
// ([Containment.ReasonCode]): the kernel read profile, or the CLI's
// profile because the backend has none (codex, agy), the host is not
// Linux, the gate section is unusable, no gate credential is declared,
// the declared one cannot be read now, the CLI is not installed, the
// kernel sandbox does not qualify on this host, or the kernel runtime
// cannot be opened for another reason (its message says which).
const (
	ContainKernel               = "containment.kernel"
	ContainBackend              = "containment.backend"
	ContainHost                 = "containment.host"
	ContainConfig               = "containment.config"
	ContainNoCredential         = "containment.no_credential"
	ContainCredentialUnresolved = "containment.credential_unresolved"
	ContainCLINotFound          = "containment.cli_not_found"
	ContainSandboxUnavailable   = "containment.sandbox_unavailable"
	ContainUnavailable          = "containment.unavailable"
)

// Containment reports, per installed backend, the containment its
// read-only turns get on this host and why. It opens the delegation
// runtime (gate, sandbox, the qualified CLI) when a gate credential is
// configured and readable, so the answer is the one a turn would get.
func (g *Governor) Containment(ctx context.Context) []Containment {
	cfg, _ := g.loadConfig()
	var out []Containment
	for _, b := range g.runner.Backends() {
		kernel, why := g.kernelFor(ctx, cfg, b.Name())
		c := Containment{Backend: b.Name(), Kind: adapter.ContainmentProfile, Reason: why.text, ReasonCode: why.code}
		if kernel != nil {
			c.Kind = adapter.ContainmentKernel
		}
		out = append(out, c)
	}
	return out
}

// containWhy is why a turn gets its containment: one of the Contain*
// codes and the sentence a user reads.
type containWhy struct{ code, text string }

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
// read profile, or nil and why it runs in the CLI's profile.
// Codex stays on its verified profile: its read-only sandbox cannot run
// nested inside the kernel boundary, where every command fails while its
// thread still reports readOnly (notes/delegation.md §3), so a nested
// report would be untrue. A declared credential that cannot be read now
// keeps the CLI's profile as no credential does: every request of a
// kernel turn would be refused at the gate (secret.binding_failed), as
// delegate refuses such a job (delegate.credential_unresolved).
func (g *Governor) kernelFor(ctx context.Context, cfg config.File, backend string) (*kernelRuntime, containWhy) {
	switch {
	case backend == "codex":
		return nil, containWhy{ContainBackend, "Codex's own read-only sandbox cannot run nested inside coagent8's kernel sandbox (its commands fail while it still reports readOnly), so Codex turns keep its verified read-only profile"}
	case backend != "claude":
		return nil, containWhy{ContainBackend, "no kernel read profile for " + backend + " in this version"}
	case runtime.GOOS != "linux":
		return nil, containWhy{ContainHost, "the kernel sandbox needs Linux; this host is " + runtime.GOOS}
	}
	creds, err := cfg.GateCredentials()
	if err != nil {
		return nil, containWhy{ContainConfig, "the gate credentials of the coagent8 configuration are unusable: " + err.Error()}
	}
	declared := creds[string(gate.Anthropic)]
	if declared == "" {
		return nil, containWhy{ContainNoCredential, "no gate credential configured for anthropic (set gate.credentials.anthropic to env:NAME or file:/abs/path)"}
	}
	if why, ok := g.credentialReadable(declared); !ok {
		return nil, why
	}
	k, err := g.kernelRuntime(ctx)
	if err != nil {
		return nil, runtimeWhy(err)
	}
	return k, containWhy{ContainKernel, "the CLI runs in coagent8's kernel sandbox (read profile): the workspace read-only, the provider gate its only network, a phantom credential of a per-turn grant"}
}

// credentialReadable reports whether the anthropic reference declared
// can be read now, as the gate reads it on every request; the value is
// dropped at once and never named, the reference is.
func (g *Governor) credentialReadable(declared string) (containWhy, bool) {
	const key = "gate.credentials.anthropic"
	ref, err := secret.ParseRef(declared)
	if err != nil { // ParseRef never quotes its input
		return containWhy{ContainConfig, "the gate credentials of the coagent8 configuration are unusable: " + key + " must be env:NAME or file:/abs/path (a clean absolute path)"}, false
	}
	if _, err := (secret.Resolver{Env: g.env}).Resolve(ref); err != nil {
		return containWhy{ContainCredentialUnresolved, "the credential " + key + " declares, " + ref.String() + ", " + unreadable(key, err)}, false
	}
	return containWhy{}, true
}

// unreadable says why the credential declared at config key could not be
// resolved (err from [secret.Resolver.Resolve]: its fixed cause, never a
// value) and what to do: the one wording of consult containment, doctor
// and delegate jobs.
func unreadable(key string, err error) string {
	return "cannot be read: " + secret.Cause(err) + "; set it before starting coagent8, or change " + key
}

// runtimeWhy says which part of the kernel runtime failed to open: the
// CLI (not installed), the sandbox (not qualified on this host) or
// another (its message).
func runtimeWhy(err error) containWhy {
	fe := fault.From(err)
	switch fe.Code {
	case fault.CLINotFound:
		return containWhy{ContainCLINotFound, "the claude CLI was not found, so no Claude Code can run in the kernel sandbox: " + fe.Message}
	case fault.SandboxUnavailable:
		return containWhy{ContainSandboxUnavailable, "the kernel sandbox is unavailable on this host: " + fe.Message}
	}
	return containWhy{ContainUnavailable, "the kernel read profile cannot be opened: " + fe.Message}
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
	k, why := g.kernelFor(ctx, cfg, treq.Backend)
	treq.ContainmentReason = why.text
	if k == nil {
		return func() {}, g.kernelSessionUnavailable(treq, why.text)
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
