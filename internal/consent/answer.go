package consent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/policy"
)

// Refusal reasons. Governance reasons come from policy. The
// user's own no and a retry with no valid answer are the governor's
// ([governor.NoWayAround] lists them): one spelling for both packages.
const (
	ReasonUnsupportedClient = "consent.unsupported_client" // no form elicitation capability
	ReasonDeclined          = governor.ReasonConsentDeclined
	ReasonCancelled         = "consent.cancelled" // action "cancel" (dismissed, or a headless host)
	ReasonNotApproved       = governor.ReasonConsentNotApproved
	ReasonInvalidAnswer     = governor.ReasonConsentInvalidAnswer
	ReasonTimeout           = "consent.timeout"            // no answer in time
	ReasonFailed            = "consent.elicitation_failed" // transport error, or the SDK rejected the answer
	ReasonAborted           = "consent.aborted"            // the tool call was cancelled while asking
	ReasonInvalidState      = governor.ReasonConsentInvalidState
)

// inputKey names our entry in InputRequests / InputResponses.
const inputKey = "coagent8.consent"

// answered handles the retried call of the multi-round-trip flow.
func (g *Gate) answered(req *mcp.CallToolRequest, d policy.Decision) (Outcome, *mcp.CallToolResult, error) {
	took, reason := g.redeem(req.Params.RequestState, callBinding(req, d), d)
	if reason != "" {
		return Outcome{}, nil, g.deny(d, reason)
	}
	res, _ := req.Params.InputResponses[inputKey].(*mcp.ElicitResult)
	return g.judge(res, d, took)
}

// elicitLegacy asks with elicitation/create on protocols before 2026-07-28.
func (g *Gate) elicitLegacy(ctx context.Context, req *mcp.CallToolRequest, d policy.Decision) (Outcome, *mcp.CallToolResult, error) {
	if req.Session == nil {
		return Outcome{}, nil, g.deny(d, ReasonUnsupportedClient)
	}
	ectx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	sent := g.now()
	res, err := req.Session.Elicit(ectx, params(d))
	switch {
	case err == nil:
		return g.judge(res, d, g.now().Sub(sent))
	case ctx.Err() != nil:
		return Outcome{}, nil, g.deny(d, ReasonAborted)
	case errors.Is(ectx.Err(), context.DeadlineExceeded):
		return Outcome{}, nil, g.deny(d, ReasonTimeout)
	}
	// The cause (transport error or schema mismatch) goes to the event
	// detail, never to the client.
	return Outcome{}, nil, g.denyCause(d, ReasonFailed, err)
}

// judge applies R-042: only accept + approve === true is consent. took is
// how long the host took to answer, which tells a person's decline or
// dismissal from the host's own (see quick).
func (g *Gate) judge(res *mcp.ElicitResult, d policy.Decision, took time.Duration) (Outcome, *mcp.CallToolResult, error) {
	if res == nil {
		return Outcome{}, nil, g.deny(d, ReasonInvalidAnswer)
	}
	switch res.Action {
	case "decline", "cancel":
		return Outcome{}, nil, g.refuseAnswer(d, res.Action, took)
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

// HumanFloor is the shortest time in which a person can read the approval
// form and answer it. A decline or cancel that arrives sooner came from
// the host itself: `codex exec` declines every elicitation at once, and
// hosts that cannot show a form cancel it unseen (issue 19 items 15, 16).
const HumanFloor = time.Second

// quick reports whether an answer after took was the host's own.
func quick(took time.Duration) bool { return took >= 0 && took < HumanFloor }

// refuseAnswer refuses a decline or cancel. The reason stays the action's
// (consent.declined, consent.cancelled); the message claims a person
// acted only when one could have, and the detail "answered_by" is "host"
// when the answer came faster than [HumanFloor], else "user", with
// "answer_ms" the measured time.
func (g *Gate) refuseAnswer(d policy.Decision, action string, took time.Duration) error {
	reason, by, msg, verb := ReasonDeclined, "user", "", "declined"
	if action == "cancel" {
		reason, verb = ReasonCancelled, "cancelled"
	}
	if quick(took) {
		by = "host"
		msg = fmt.Sprintf("model %s needs the user's approval, and the MCP host %s the approval request %d ms after it was sent, "+
			"faster than a person can answer, so the question was most likely never shown (codex exec, for one, declines every question by itself); "+
			"approve it in an MCP host that shows the form, or add it to governance.models.allow in the coagent8 configuration",
			d.Model, verb, took.Milliseconds())
	}
	fe := g.denyFault(d, reason, nil)
	if msg != "" {
		fe.Message = msg
	}
	fe = fe.With("answered_by", by).With("answer_ms", strconv.FormatInt(took.Milliseconds(), 10))
	return g.record(fe, d.Backend, d.Model, d.Rule, nil)
}

func (g *Gate) deny(d policy.Decision, reason string) error {
	return g.denyCause(d, reason, nil)
}

func (g *Gate) denyCause(d policy.Decision, reason string, cause error) error {
	return g.record(g.denyFault(d, reason, cause), d.Backend, d.Model, d.Rule, cause)
}

func (g *Gate) denyFault(d policy.Decision, reason string, cause error) *fault.Error {
	fe := fault.Wrap(fault.PolicyDenied, reason, denyMessage(d, reason), cause)
	if policy.ValidID(d.Model) {
		fe = fe.With("model", d.Model)
	}
	if d.Rule != "" {
		fe = fe.With("rule", d.Rule)
	}
	return fe
}
