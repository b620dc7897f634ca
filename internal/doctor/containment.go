package doctor

// Containment is the doctor's containment section for one backend
// (issue 15 scope 8): which containment its read-only consult and review
// turns get on this host — "kernel" (coagent8's sandbox, read profile,
// behind the provider gate) or "profile" (the CLI's own verified
// read-only profile) — and why, as the governed path decides it.
type Containment struct {
	Backend string `json:"backend"`
	Kind    string `json:"containment"`
	Reason  string `json:"reason"`
}
