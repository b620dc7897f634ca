package egress

// Built-in policy numbers, used when config.json has no "egress" section.
// They are part of the product contract (README "Provider gate and
// egress", `coagent8 gate serve --help`): change them only with the docs.
const (
	// DefaultPortalThreshold and DefaultForbiddenThreshold are the R-184
	// example thresholds. With no labels nothing reaches them except a
	// credential (weight 1.0), which the non-declassifiable rule refuses
	// first anyway.
	DefaultPortalThreshold    = 0.3
	DefaultForbiddenThreshold = 0.8
	// DefaultProviderRequestUses and DefaultProviderRequestBytes are the
	// lifetime capacity of the provider-request account: one million
	// transmissions and 256 GiB of request bodies per host. The account
	// has no time window and never refunds, so these are generous
	// on purpose: about 500 days at 2,000 model requests a day, and an
	// average body of 256 KiB.
	DefaultProviderRequestUses  = 1_000_000
	DefaultProviderRequestBytes = 256 << 30
	// DefaultDiagnosticUses and DefaultDiagnosticBytes are the lifetime
	// capacity of the closed-diagnostic-recording account (the `issue`
	// tool's local report records): ten thousand reports and 64 MiB.
	DefaultDiagnosticUses  = 10_000
	DefaultDiagnosticBytes = 64 << 20
)

// DefaultConfig returns the conservative built-in policy: no labels,
// unlabelled content weighs 0, credentials are non-declassifiable (a
// body carrying one is refused at any weight, R-187), thresholds
// DefaultPortalThreshold / DefaultForbiddenThreshold, and only the
// [ProviderRequest] purpose has capacity (DefaultProviderRequestUses,
// DefaultProviderRequestBytes) and [DiagnosticRecording]
// (DefaultDiagnosticUses, DefaultDiagnosticBytes) have capacity.
//
// The first transmission opens the durable account with these ceilings.
// A later "egress" section with other provider-request ceilings is then
// refused as a configuration conflict: the retained account
// cannot be reset by editing the configuration.
func DefaultConfig() Config {
	portal, forbidden := DefaultPortalThreshold, DefaultForbiddenThreshold
	return Config{
		PortalThreshold:    &portal,
		ForbiddenThreshold: &forbidden,
		NonDeclassifiable:  []Category{Credentials},
		Purposes: map[Purpose]PurposeConfig{
			ProviderRequest: {Label: "model provider requests",
				MaxUses: DefaultProviderRequestUses, MaxBytes: DefaultProviderRequestBytes},
			DiagnosticRecording: {Label: "local bug-report records",
				MaxUses: DefaultDiagnosticUses, MaxBytes: DefaultDiagnosticBytes},
		},
	}
}
