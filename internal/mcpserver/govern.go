package mcpserver

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/consent"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
	"github.com/coagent8/coagent8/internal/turn"
)

// Governance is model-cost governance and consent (seed 000 §2). All
// fields are required for an MCP server that runs turns.
type Governance struct {
	// ConfigPath is re-read on every turn so edits and "remember" apply.
	ConfigPath string
	// Catalog is the price catalog in force (nil = no price data).
	Catalog policy.Catalog
	// Consent asks the user through MCP elicitation.
	Consent *consent.Gate
}

// governed is the admitted model of one turn.
type governed struct {
	model   string
	warning string
}

// govern runs, before any backend session: configuration check, backend
// routing check, concrete model resolution (metadata-only probes), the
// policy decision and, where it says ask, consent. Exactly one of the
// results is meaningful: a non-nil *mcp.CallToolResult must be returned
// to the client as is (elicitation input requests); else err refuses the
// turn; else the turn may run the returned model.
func (s *Server) govern(ctx context.Context, req *mcp.CallToolRequest, treq *turn.Request) (governed, *mcp.CallToolResult, error) {
	g := s.governance
	cfg, _ := config.LoadFile(g.ConfigPath)
	if err := cfg.GovernanceErr(); err != nil {
		return governed{}, nil, g.Consent.Refuse(err, treq.Backend, treq.Model, "")
	}
	if cfg.AllowedBackends != nil && !slices.Contains(cfg.AllowedBackends, treq.Backend) &&
		!(treq.Backend == "agy" && slices.Contains(cfg.AllowedBackends, "gemini")) {
		err := fault.New(fault.PolicyDenied, "routing.backend_not_allowed",
			"backend "+treq.Backend+" is not in routing.allowedBackends of the coagent8 configuration")
		return governed{}, nil, g.Consent.Refuse(err, treq.Backend, treq.Model, "routing.allowedBackends")
	}
	ws, err := turn.Workspace(treq.Workspace)
	if err != nil {
		return governed{}, nil, err
	}
	concrete, def, err := s.models.resolve(ctx, s.runner.Backend(treq.Backend), ws, treq.Model)
	if err != nil {
		return governed{}, nil, err
	}
	d := policy.Decide(cfg.Governance, g.Catalog, policy.Input{Backend: treq.Backend, Requested: concrete, Default: def, Effort: treq.Effort})
	out, res, err := g.Consent.Check(ctx, req, d)
	if res != nil || err != nil {
		return governed{}, res, err
	}
	return governed{model: d.Model, warning: out.Warning}, nil, nil
}

// apply makes the turn run exactly the approved model and refuse any
// other the backend reports.
func (s *Server) apply(treq *turn.Request, gv governed) {
	treq.Model = gv.model
	backend := treq.Backend
	treq.CheckModel = func(reported string) error {
		if err := policy.CheckReported(gv.model, reported); err != nil {
			return s.governance.Consent.Refuse(err, backend, gv.model, "")
		}
		return nil
	}
}

// modelCache resolves concrete model ids by metadata-only probes and
// remembers them briefly (a probe costs a CLI start; AUD-P1-4).
type modelCache struct {
	mu  sync.Mutex
	ttl time.Duration
	m   map[[2]string]cached
}

type cached struct {
	model string
	at    time.Time
}

// resolve returns the concrete model the backend will run for requested
// ("" = its default) and the concrete default model.
func (c *modelCache) resolve(ctx context.Context, b adapter.Backend, ws, requested string) (concrete, def string, err error) {
	if b == nil {
		return "", "", fault.New(fault.InvalidInput, "backend.unknown", "unknown backend")
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
	return b.Probe(ctx).DefaultModel, nil
}
