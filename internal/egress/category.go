package egress

// Category is a closed set of content categories, versioned with the
// policy (requirements D-15).
type Category string

// Categories.
const (
	Credentials  Category = "credentials" // always non-declassifiable
	PersonalData Category = "personal-data"
	PrivateCode  Category = "private-code"
	Confidential Category = "confidential"
	Internal     Category = "internal"
)

func (c Category) valid() bool {
	switch c {
	case Credentials, PersonalData, PrivateCode, Confidential, Internal:
		return true
	}
	return false
}

// Purpose is a code-defined disclosure purpose. Accounts are keyed by it,
// never by a configuration label, so a rename cannot reset capacity.
type Purpose string

// Purposes.
const (
	// ProviderRequest is every model-provider request through the gate.
	ProviderRequest Purpose = "provider-request"
	// DiagnosticRecording is closed-diagnostic-recording@1: the exact
	// bytes of an `issue` report recorded locally.
	DiagnosticRecording Purpose = "closed-diagnostic-recording"
)

func (p Purpose) valid() bool { return p == ProviderRequest || p == DiagnosticRecording }
