package egress

import "fmt"

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
	p.recipients, p.requires = c.Recipients, c.Requires
	return nil
}

// recipientReason returns the refusal reason for sending to provider
// under p's requirements: [ReasonUnknownFact] when a fact the policy
// depends on is not stated, [ReasonRecipientFact] when a stated fact
// violates it, "" otherwise.
func (p *Policy) recipientReason(provider string) string {
	r := p.requires
	if r == nil {
		return ""
	}
	f := p.recipients[provider]
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
