package policy

import "github.com/coagent8/coagent8/internal/fault"

// Err returns nil unless d denies; then a *fault.Error: INVALID_INPUT for a
// malformed model id, otherwise POLICY_DENIED with d.Reason and the rule
// . An Ask decision is not an error: consent decides it.
func (d Decision) Err() error {
	if d.Effect != Deny {
		return nil
	}
	if d.Reason == ReasonInvalidModel {
		return fault.New(fault.InvalidInput, ReasonInvalidModel,
			"model id must match ^[A-Za-z0-9][A-Za-z0-9._:/\\[\\]-]{0,127}$")
	}
	e := fault.New(fault.PolicyDenied, d.Reason, denyMessage(d))
	if d.Rule != "" {
		e = e.With("rule", d.Rule)
	}
	if ValidID(d.Model) {
		e = e.With("model", d.Model)
	}
	return e
}

func denyMessage(d Decision) string {
	switch d.Reason {
	case ReasonDenyRule:
		return "model " + d.Model + " is denied by the user's configuration (" + d.Rule + ")"
	case ReasonUnresolved:
		return "the model the backend would run could not be resolved, so it cannot be approved"
	}
	return "the model may not run (" + d.Reason + ")"
}
