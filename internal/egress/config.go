package egress

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Config is the "egress" section of config.json. Decode it with
// [ParseConfig]; every field is documented in docs and validated by
// [NewPolicy]. Unknown fields are refused.
type Config struct {
	// PortalThreshold is the weight (0.0 public-safe .. 1.0 strictly
	// private) from which raw egress needs the privacy filter. Required.
	PortalThreshold *float64 `json:"portal_threshold"`
	// ForbiddenThreshold is the weight from which egress is refused.
	// Required; 0 <= portal_threshold <= forbidden_threshold <= 1.
	ForbiddenThreshold *float64 `json:"forbidden_threshold"`
	// DefaultClassification is the weight of content no label matched
	// (default 0).
	DefaultClassification float64 `json:"default_classification"`
	// NonDeclassifiable lists categories refused at any weight;
	// "credentials" is always included.
	NonDeclassifiable []Category `json:"non_declassifiable"`
	// Labels classify workspace paths and content patterns.
	Labels []LabelConfig `json:"labels"`
	// Purposes set the cumulative capacity per purpose; a purpose not
	// listed is refused.
	Purposes map[Purpose]PurposeConfig `json:"purposes"`
	// Targets narrow the baseline per provider (and model).
	Targets []TargetRule `json:"targets"`
	// DecisionTTLSeconds bounds how long a decision and its filter
	// evidence stay valid before the first byte (default 30).
	DecisionTTLSeconds int `json:"decision_ttl_seconds"`
	// Recipients states facts about each provider as a recipient
	// (retention, training use); absent facts are unknown.
	Recipients map[string]RecipientFacts `json:"recipients,omitempty"`
	// Intermediaries states the same facts about each intermediary a
	// request may pass through on its way to a provider (an HTTPS proxy
	// or egress relay the organisation requires), keyed by its origin
	// ("https://proxy.example:3128"). An intermediary the gate routes
	// through but this map does not name has every fact unknown.
	Intermediaries map[string]RecipientFacts `json:"intermediaries,omitempty"`
	// Requires makes the policy depend on recipient facts: a target whose
	// facts are unknown or violate it is refused (issue 18 scope 5).
	Requires *RecipientRequirements `json:"requires,omitempty"`
}

// LabelConfig gives paths (workspace globs, "**" for any depth) and
// content patterns (RE2, matched on the raw request bytes) a weight and
// a category.
type LabelConfig struct {
	Name           string   `json:"name"`
	Paths          []string `json:"paths"`
	Patterns       []string `json:"patterns"`
	Classification float64  `json:"classification"`
	Category       Category `json:"category"`
}

// PurposeConfig is a purpose's cumulative disclosure ceiling. Label is a
// display name only: renaming it never opens a new account.
type PurposeConfig struct {
	Label    string `json:"label"`
	MaxUses  int64  `json:"max_uses"`
	MaxBytes int64  `json:"max_bytes"`
}

// TargetRule narrows the baseline for one provider (and, if set, one
// exact model). Thresholds above the baseline are refused at load: a
// target rule can never widen.
type TargetRule struct {
	Provider           string     `json:"provider"`
	Model              string     `json:"model"`
	PortalThreshold    *float64   `json:"portal_threshold"`
	ForbiddenThreshold *float64   `json:"forbidden_threshold"`
	NonDeclassifiable  []Category `json:"non_declassifiable"`
	DenyPurposes       []Purpose  `json:"deny_purposes"`
}

// ParseConfig decodes the raw "egress" section strictly (unknown fields
// refused). Wire it from internal/config: keep the section as a
// json.RawMessage and pass it here, then to [NewPolicy].
func ParseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("egress config: %w", err)
	}
	if dec.More() {
		return Config{}, fmt.Errorf("egress config: trailing data")
	}
	return c, nil
}
