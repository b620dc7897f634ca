package agy

import "context"

// Doctor is agy's doctor section: the metadata probe, the
// inherited MCP servers and plugins by name, and the limitation sentence.
// Paths under home are shown as "~"; the caller still applies diagnostic
// redaction to the whole report.
type Doctor struct {
	Limitation  string      `json:"limitation"`
	Inheritance Inheritance `json:"inherited"`
	// Verified states what coagent8 could verify about agy's profile:
	// nothing beyond passing --sandbox.
	Verified string `json:"readOnlyVerification"`
}

// Doctor returns the agy section for workspace ("" = user configuration
// only). It reads configuration files only; it never starts a turn.
func (b *Backend) Doctor(ctx context.Context, workspace string) Doctor {
	return Doctor{Limitation: Limitation, Inheritance: Discover(b.env, workspace),
		Verified: "not verified: agy reports no effective policy; --sandbox is passed on every start"}
}
