package consent

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
)

// Refusal reasons. Governance reasons come from policy.
const (
	ReasonUnsupportedClient = "consent.unsupported_client" // no form elicitation capability
	ReasonDeclined          = "consent.declined"           // action "decline"
	ReasonCancelled         = "consent.cancelled"          // action "cancel" (dismissed, or a headless host)
	ReasonNotApproved       = "consent.not_approved"       // accepted with approve: false
	ReasonInvalidAnswer     = "consent.invalid_answer"     // approve missing or not a boolean; unknown action
	ReasonTimeout           = "consent.timeout"            // no answer in time
	ReasonFailed            = "consent.elicitation_failed" // transport error, or the SDK rejected the answer
	ReasonAborted           = "consent.aborted"            // the tool call was cancelled while asking
	ReasonInvalidState      = "consent.invalid_state"      // retried call with a missing, forged, replayed or foreign state
)

// inputKey names our entry in InputRequests / InputResponses.
const inputKey = "coagent8.consent"

// answered handles the retried call of the multi-round-trip flow.
func (g *Gate) answered(req *mcp.CallToolRequest, d policy.Decision) (Outcome, *mcp.CallToolResult, error) {
	if reason := g.redeem(req.Params.RequestState, d); reason != "" {
		return Outcome{}, nil, g.deny(d, reason)
	}
	res, _ := req.Params.InputResponses[inputKey].(*mcp.ElicitResult)
	return g.judge(res, d)
}

// elicitLegacy asks with elicitation/create on protocols before 2026-07-28.
func (g *Gate) elicitLegacy(ctx context.Context, req *mcp.CallToolRequest, d policy.Decision) (Outcome, *mcp.CallToolResult, error) {
	if req.Session == nil {
		return Outcome{}, nil, g.deny(d, ReasonUnsupportedClient)
	}
	ectx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	res, err := req.Session.Elicit(ectx, params(d))
	switch {
	case err == nil:
		return g.judge(res, d)
	case ctx.Err() != nil:
		return Outcome{}, nil, g.deny(d, ReasonAborted)
	case errors.Is(ectx.Err(), context.DeadlineExceeded):
		return Outcome{}, nil, g.deny(d, ReasonTimeout)
	}
	// The cause (transport error or schema mismatch) goes to the event
	// detail, never to the client.
	return Outcome{}, nil, g.denyCause(d, ReasonFailed, err)
}

// judge applies R-042: only accept + approve === true is consent.
func (g *Gate) judge(res *mcp.ElicitResult, d policy.Decision) (Outcome, *mcp.CallToolResult, error) {
	if res == nil {
		return Outcome{}, nil, g.deny(d, ReasonInvalidAnswer)
	}
	switch res.Action {
	case "decline":
		return Outcome{}, nil, g.deny(d, ReasonDeclined)
	case "cancel":
		return Outcome{}, nil, g.deny(d, ReasonCancelled)
	case "accept":
	default:
		return Outcome{}, nil, g.deny(d, ReasonInvalidAnswer)
	}
	approve, isBool := res.Content["approve"].(bool)
	switch {
	case !isBool:
		return Outcome{}, nil, g.deny(d, ReasonInvalidAnswer)
	case !approve:
		return Outcome{}, nil, g.deny(d, ReasonNotApproved)
	}
	return g.remember(d, res.Content), nil, nil
}

func (g *Gate) deny(d policy.Decision, reason string) error {
	return g.denyCause(d, reason, nil)
}

func (g *Gate) denyCause(d policy.Decision, reason string, cause error) error {
	fe := fault.Wrap(fault.PolicyDenied, reason, denyMessage(d, reason), cause)
	if policy.ValidID(d.Model) {
		fe = fe.With("model", d.Model)
	}
	if d.Rule != "" {
		fe = fe.With("rule", d.Rule)
	}
	return g.record(fe, d.Backend, d.Model, d.Rule, cause)
}
