package governor

import (
	"context"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
)

// modelCache resolves concrete model ids by metadata-only probes and
// remembers them for ttl (a probe costs a CLI start; AUD-P1-4).
type modelCache struct {
	mu  sync.Mutex
	ttl time.Duration
	m   map[[2]string]cached
}

type cached struct {
	model string
	at    time.Time
}

func newModelCache(ttl time.Duration) *modelCache {
	return &modelCache{ttl: ttl, m: map[[2]string]cached{}}
}

// resolve returns the concrete model the backend will run for requested
// ("" = its default) and the concrete default model.
func (c *modelCache) resolve(ctx context.Context, b adapter.Backend, ws, requested string) (concrete, def string, err error) {
	if b == nil {
		return "", "", fault.New(fault.InvalidInput, "backend.unknown", "unknown backend: use claude, codex or agy (or auto)")
	}
	if requested != "" {
		if err := adapter.ValidModel(requested); err != nil {
			return "", "", err
		}
	}
	def, err = c.one(ctx, b, ws, "")
	if err != nil {
		return "", "", err
	}
	if requested == "" {
		return def, def, nil
	}
	concrete, err = c.one(ctx, b, ws, requested)
	return concrete, def, err
}

func (c *modelCache) one(ctx context.Context, b adapter.Backend, ws, model string) (string, error) {
	key := [2]string{b.Name(), model}
	c.mu.Lock()
	hit, ok := c.m[key]
	c.mu.Unlock()
	if ok && time.Since(hit.at) < c.ttl {
		return hit.model, nil
	}
	got, err := probeModel(ctx, b, ws, model)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.m[key] = cached{model: got, at: time.Now()}
	c.mu.Unlock()
	return got, nil
}

// probeModel asks the backend which concrete model it would run, without a
// prompt. Backends without a resolver run the requested id as given, or
// the default their probe reports; an unknown default stays "" and the
// policy refuses it as unresolved.
func probeModel(ctx context.Context, b adapter.Backend, ws, model string) (string, error) {
	if r, ok := b.(adapter.Resolver); ok {
		res, err := r.Resolve(ctx, ws, model)
		if err != nil {
			return "", err
		}
		return res.Model, nil
	}
	if model != "" {
		return model, nil
	}
	pr := b.Probe(ctx)
	if pr.DefaultModel == "" && pr.Error != nil {
		// The CLI is missing or unusable: say so (CLI_NOT_FOUND, …)
		// rather than "no model could be resolved".
		return "", fault.New(fault.Code(pr.Error.Code), pr.Error.Reason, pr.Error.Message)
	}
	return pr.DefaultModel, nil
}
