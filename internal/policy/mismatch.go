package policy

import "github.com/coagent8/coagent8/internal/fault"

// ReasonModelMismatch is the reason of [CheckReported]'s refusal.
const ReasonModelMismatch = "consent.model_mismatch"

// CheckReported returns nil if the model a backend reported at session start
// is the approved one, else a POLICY_DENIED *fault.Error with reason
// consent.model_mismatch. An empty report is a mismatch too: consent
// covers one concrete model, and a backend that does not say which model it
// runs cannot show that it runs that one. Ids compare case-insensitively,
// with no alias or effort-suffix folding.
func CheckReported(approved, reported string) error {
	if approved != "" && sameID(approved, reported) {
		return nil
	}
	return fault.New(fault.PolicyDenied, ReasonModelMismatch,
		"the backend started a different model from the one approved; the turn was stopped before it began").
		With("approved", safeID(approved)).With("reported", safeID(reported))
}

// safeID returns id if it is a valid model id, else a placeholder, so that
// a hostile report cannot inject text into an error detail.
func safeID(id string) string {
	if ValidID(id) {
		return id
	}
	return "(invalid id)"
}
