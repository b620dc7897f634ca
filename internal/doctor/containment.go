package doctor

import "strings"

// Containment is the doctor's containment section for one backend
// (issue 15 scope 8): which containment its read-only consult and review
// turns get on this host — "kernel" (coagent8's sandbox, read profile,
// behind the provider gate) or "profile" (the CLI's own verified
// read-only profile) — and why, as the governed path decides it, in
// words (Reason) and as a governor.Contain* code (ReasonCode).
type Containment struct {
	Backend    string `json:"backend"`
	Kind       string `json:"containment"`
	Reason     string `json:"reason"`
	ReasonCode string `json:"reasonCode"`
}

// reasonCredentialUnresolved is governor.ContainCredentialUnresolved
// (doctor does not import the governor).
const reasonCredentialUnresolved = "containment.credential_unresolved"

// containmentAdvice returns what the user can fix about containment: a
// gate credential declared for the kernel sandbox that cannot be read.
// The others are the backend's own advice (a missing CLI), the host's
// (no kernel sandbox) or a choice (no credential declared).
func containmentAdvice(cs []Containment) []string {
	var out []string
	for _, c := range cs {
		if c.ReasonCode != reasonCredentialUnresolved {
			continue
		}
		n, ok := backendNames[c.Backend]
		if !ok {
			n.product = c.Backend
		}
		out = append(out, n.product+" turns run on its own read-only profile, not in coagent8's kernel sandbox: "+
			strings.TrimRight(c.Reason, ". ")+"; then run doctor again.")
	}
	return out
}
