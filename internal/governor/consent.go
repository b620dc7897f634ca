package governor

import (
	"context"

	"github.com/coagent8/coagent8/internal/policy"
)

// Consent asks the user whether a model that policy marked "ask" may run
// for one turn (seed 000 §2). Each surface supplies its own: an MCP tool
// call asks by elicitation (consent.Gate.Elicitation), the terminal, which
// cannot ask, refuses (consent.Gate.Refusal). Only the user's answer, never
// a request field, may approve.
type Consent interface {
	// Ask is called only for a decision whose Effect is [policy.Ask],
	// before any backend session or prompt. It returns, exactly one of:
	//
	//   - an error: the run is refused with it (a *fault.Error,
	//     POLICY_DENIED with a consent.* reason); the Consent has recorded
	//     its one security event;
	//   - an Answer with Pending set: the question went to the surface out
	//     of band (an MCP input request); nothing runs, and the surface
	//     calls again with the answer;
	//   - otherwise the user approved d.Model for this one turn.
	Ask(ctx context.Context, d policy.Decision) (Answer, error)
}

// Answer is a Consent's non-refusing reply.
type Answer struct {
	// Pending reports that the answer will come with a later call.
	Pending bool
	// Warning is a non-fatal notice for the result (the approval could
	// not be remembered); it contains no path or secret.
	Warning string
}
