package claude

import (
	"context"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/process"
)

var _ adapter.Resolver = (*Backend)(nil)

// Resolve starts the CLI in the read-only profile with the local slash
// command /usage as its prompt: the CLI writes its startup report (which
// is verified exactly as for a turn) and answers locally without any
// model request. It is allowed before consent (seed 000 §2: metadata-only
// probes) and tells which concrete model an alias resolves to. A run that
// reports a model turn or a cost is refused.
func (b *Backend) Resolve(ctx context.Context, workspace, model string) (adapter.Resolution, error) {
	inv, err := b.prepare(ctx, adapter.Turn{Prompt: "/usage\n", Workspace: workspace, Model: model})
	if err != nil {
		return adapter.Resolution{}, err
	}
	key := b.modelKey(inv.spec.Path, inv.model)
	if e, ok := b.cachedModel(key); ok {
		return adapter.Resolution{Model: e.Model, Verified: e.Verified + " (cached)"}, nil
	}
	res, err := b.resolve(ctx, inv)
	if err == nil {
		b.storeModel(key, modelEntry{Model: res.Model, Verified: res.Verified, At: time.Now()})
	}
	return res, err
}

func (b *Backend) resolve(ctx context.Context, inv invocation) (adapter.Resolution, error) {
	inv.spec.Args = append(inv.spec.Args, "--no-session-persistence")
	inv.spec.Deadline = probeDeadline
	p, err := process.Start(ctx, inv.spec)
	if err != nil {
		return adapter.Resolution{}, err
	}
	res, err := consume(p, inv, adapter.Turn{})
	p.Kill()
	if err != nil {
		return adapter.Resolution{}, p.Classify(err)
	}
	if res.Usage.InputTokens != 0 || res.Usage.OutputTokens != 0 || res.Usage.CostUSD != 0 {
		return adapter.Resolution{}, fault.New(fault.SandboxUnavailable, "claude.probe_model_turn",
			"Claude Code made a model request during a metadata-only probe; refused.")
	}
	return adapter.Resolution{Model: res.Model, Verified: res.Verified}, nil
}
