package gate

import (
	"context"
	"errors"
	"net/http"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/fault"
)

// EgressDecider settles the egress decision of one transmission before
// its first byte (issue 10; [egress.Decider] implements it). Seal returns
// the exact bytes to forward — the body as sent or the privacy-filtered
// candidate — after consuming the disclosure budget, or a *fault.Error
// whose Reason is the denial reason.
type EgressDecider interface {
	Seal(ctx context.Context, t egress.Transmission) ([]byte, error)
}

var _ EgressDecider = (*egress.Decider)(nil)

// ErrNoEgressDecider is why [New] refuses Options without Egress: the
// gate has no mode that forwards a body without an egress decision.
var ErrNoEgressDecider = errors.New("gate: no egress decider")

// decideEgress runs the egress decision of an admitted POST: every
// forwarded body, a retry included, gets its own decision. The reserved
// amount is recomputed from the sealed bytes. Other admitted methods
// (GET /v1/models) carry no body: their target is the fixed route alone.
func (g *Gate) decideEgress(r *http.Request, a *admission) (string, string) {
	if r.Method != http.MethodPost {
		return "", ""
	}
	origins, err := origins(g.opts)
	if err != nil {
		return ReasonUnavailable, ""
	}
	target := a.route.Path
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	out, err := g.opts.Egress.Seal(r.Context(), egress.Transmission{Job: a.grant.Job, Purpose: egress.ProviderRequest,
		JSON: true, Body: a.body, Target: egress.PortalTarget{Provider: string(a.route.Provider), Operation: a.route.Path,
			Model: a.grant.Model, Origin: origins[a.route.Provider].String(), RequestTarget: target}})
	var fe *fault.Error
	if errors.As(err, &fe) {
		return fe.Reason, ""
	}
	if err != nil {
		return "egress.unavailable", ""
	}
	if len(out) != len(a.body) {
		req, _ := parseBody(out)
		a.reserved = reservation(len(out), req.outputLimit(a.grant.Ceiling), a.grant.Price)
	}
	a.body = out
	return "", ""
}
