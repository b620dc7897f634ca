package consent

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/policy"
)

// Elicitation is the MCP surface's [governor.Consent] for one tool call:
// it asks through that call's elicitation with [Gate.Check]. Create one
// per call with [Gate.Elicitation]; it is not safe for concurrent use. The
// zero value refuses every question.
type Elicitation struct {
	gate    *Gate
	req     *mcp.CallToolRequest
	pending *mcp.CallToolResult
}

var (
	_ governor.Consent = (*Elicitation)(nil)
	_ governor.Consent = Refusal{}
)

// Elicitation returns the Consent of the tool call req (which may be nil:
// every question is then refused as consent.unsupported_client).
func (g *Gate) Elicitation(req *mcp.CallToolRequest) *Elicitation {
	return &Elicitation{gate: g, req: req}
}

// Ask implements [governor.Consent] with [Gate.Check]. When the protocol
// asks by input request (MCP ≥ 2026-07-28) it returns an Answer with
// Pending set, and [Elicitation.Pending] is the result to return to the
// client unchanged.
func (e *Elicitation) Ask(ctx context.Context, d policy.Decision) (governor.Answer, error) {
	if e.gate == nil {
		return governor.Answer{}, unrecorded(d)
	}
	out, res, err := e.gate.Check(ctx, e.req, d)
	switch {
	case err != nil:
		return governor.Answer{}, err
	case res != nil:
		e.pending = res
		return governor.Answer{Pending: true}, nil
	}
	return governor.Answer{Warning: out.Warning}, nil
}

// Pending returns the input-request result of the last Ask that deferred,
// or nil.
func (e *Elicitation) Pending() *mcp.CallToolResult { return e.pending }

// Refusal is the [governor.Consent] of a surface that cannot ask the user
// (the terminal): every question is refused with POLICY_DENIED
// consent.unsupported_client and one security event, exactly as for an
// MCP client without elicitation. Its message says the terminal
// cannot ask, not that "this MCP client" cannot (issue 18 item 4); the
// governor appends the `coagent8 governance allow MODEL` remedy. Get one with [Gate.Refusal]; the
// zero value refuses too, but records no event (it has no sink).
type Refusal struct{ gate *Gate }

// Refusal returns the Consent that never asks and always refuses.
func (g *Gate) Refusal() Refusal { return Refusal{gate: g} }

// Ask implements [governor.Consent] by refusing d.
func (r Refusal) Ask(_ context.Context, d policy.Decision) (governor.Answer, error) {
	if r.gate == nil {
		return governor.Answer{}, terminalFault(d)
	}
	return governor.Answer{}, r.gate.record(terminalFault(d), d.Backend, d.Model, d.Rule, nil)
}

// unrecorded is the refusal of a zero Elicitation or Refusal: fail
// closed, with the same code and reason, though no sink records it.
func unrecorded(d policy.Decision) error {
	return fault.New(fault.PolicyDenied, ReasonUnsupportedClient, denyMessage(d, ReasonUnsupportedClient))
}

// terminalFault is the terminal's refusal of d: the code, reason and
// fields of [Gate.denyFault], in words for a person at a shell.
func terminalFault(d policy.Decision) *fault.Error {
	// No remedy here: the governor appends the exact `coagent8 governance
	// allow MODEL` to every consent refusal (governor.withRemedy).
	fe := fault.New(fault.PolicyDenied, ReasonUnsupportedClient, fmt.Sprintf(
		"model %s needs the user's approval, and a terminal command cannot ask for it "+
			"(only an MCP host that shows approval forms can)", d.Model))
	if policy.ValidID(d.Model) {
		fe = fe.With("model", d.Model)
	}
	if d.Rule != "" {
		fe = fe.With("rule", d.Rule)
	}
	return fe
}
