package egress

import (
	"fmt"
	"net/url"
)

// RecipientFacts is what the user's configuration states about a
// provider as a recipient of request content (seed 001 "Thresholds and
// refusal": unknown recipient, retention, training or custody facts
// refuse whenever policy depends on them). A nil field is unknown.
type RecipientFacts struct {
	// RetentionDays is how long the provider keeps request content
	// (0 = zero data retention).
	RetentionDays *int `json:"retention_days,omitempty"`
	// TrainingUse is whether the provider may train on request content.
	TrainingUse *bool `json:"training_use,omitempty"`
}

// RecipientRequirements make the policy depend on recipient facts
// (issue 18 scope 5). Zero value: no dependency.
type RecipientRequirements struct {
	// MaxRetentionDays refuses a target whose stated retention is longer,
	// or unknown.
	MaxRetentionDays *int `json:"max_retention_days,omitempty"`
	// NoTraining refuses a target that may train on content, or whose
	// training use is unknown.
	NoTraining bool `json:"no_training,omitempty"`
}

// parseRecipients validates the recipient facts and requirements.
func (p *Policy) parseRecipients(c Config) error {
	for prov, f := range c.Recipients {
		if prov != "anthropic" && prov != "openai" {
			return fmt.Errorf("recipients: unknown provider %q", prov)
		}
		if f.RetentionDays != nil && *f.RetentionDays < 0 {
			return fmt.Errorf("recipients.%s.retention_days must not be negative", prov)
		}
	}
	if r := c.Requires; r != nil && r.MaxRetentionDays != nil && *r.MaxRetentionDays < 0 {
		return fmt.Errorf("requires.max_retention_days must not be negative")
	}
	p.intermediaries = map[string]RecipientFacts{}
	for origin, f := range c.Intermediaries {
		canon := CanonicalOrigin(origin)
		if u, err := url.Parse(canon); err != nil || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" ||
			(u.Scheme != "https" && u.Scheme != "http") {
			return fmt.Errorf("intermediaries: %q is not an origin like https://proxy.example:3128", origin)
		}
		if f.RetentionDays != nil && *f.RetentionDays < 0 {
			return fmt.Errorf("intermediaries.%s.retention_days must not be negative", origin)
		}
		if _, dup := p.intermediaries[canon]; dup {
			return fmt.Errorf("intermediaries: %q is stated twice", canon)
		}
		p.intermediaries[canon] = f
	}
	p.recipients, p.requires = c.Recipients, c.Requires
	return nil
}

// custodyReason is [Policy.recipientReason] over every recipient of t's
// custody route: the provider, then each intermediary in order, whose
// facts come from [Config.Intermediaries] (unstated = unknown).
func (p *Policy) custodyReason(t PortalTarget) string {
	if reason := p.recipientReason(p.recipients[t.Provider]); reason != "" {
		return reason
	}
	for _, hop := range t.Intermediaries {
		if reason := p.recipientReason(p.intermediaries[CanonicalOrigin(hop)]); reason != "" {
			return reason
		}
	}
	return ""
}

// recipientReason returns the refusal reason for sending to a recipient
// with facts f under p's requirements: [ReasonUnknownFact] when a fact
// the policy depends on is not stated, [ReasonRecipientFact] when a
// stated fact violates it, "" otherwise.
func (p *Policy) recipientReason(f RecipientFacts) string {
	r := p.requires
	if r == nil {
		return ""
	}
	if r.MaxRetentionDays != nil {
		switch {
		case f.RetentionDays == nil:
			return ReasonUnknownFact
		case *f.RetentionDays > *r.MaxRetentionDays:
			return ReasonRecipientFact
		}
	}
	if r.NoTraining {
		switch {
		case f.TrainingUse == nil:
			return ReasonUnknownFact
		case *f.TrainingUse:
			return ReasonRecipientFact
		}
	}
	return ""
}
