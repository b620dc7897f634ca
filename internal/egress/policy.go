package egress

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/egress/lineage"
	"github.com/coagent8/coagent8/internal/fault"
)

// Policy is a validated egress configuration with its revision. Build it
// with [NewPolicy]; it is immutable and safe for concurrent use.
type Policy struct {
	portal, forbidden float64
	deflt             float64
	nonDecl           map[Category]bool
	labels            []label
	purposes          map[Purpose]PurposeConfig
	targets           []TargetRule
	recipients        map[string]RecipientFacts
	intermediaries    map[string]RecipientFacts // canonical origin → facts
	requires          *RecipientRequirements
	ttl               time.Duration
	revision          [32]byte
}

type label struct {
	name     string
	paths    []string
	patterns []*regexp.Regexp
	weight   float64
	category Category
}

// labelName compiles on first use: the bounded repetition makes a large
// program, and every coagent8 process would pay for it at start-up.
var labelName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`) })

// NewPolicy validates c and returns the policy. Every violation is a
// fault.InvalidInput with reason "egress.config"; the policy is refused
// whole, never applied in part.
func NewPolicy(c Config) (*Policy, error) {
	bad := func(msg string, a ...any) error {
		return fault.New(fault.InvalidInput, "egress.config", "egress policy: "+fmt.Sprintf(msg, a...))
	}
	if c.PortalThreshold == nil || c.ForbiddenThreshold == nil {
		return nil, bad("portal_threshold and forbidden_threshold are required")
	}
	p := &Policy{portal: *c.PortalThreshold, forbidden: *c.ForbiddenThreshold, deflt: c.DefaultClassification,
		nonDecl: map[Category]bool{Credentials: true}, purposes: map[Purpose]PurposeConfig{},
		ttl: 30 * time.Second}
	if !(0 <= p.portal && p.portal <= p.forbidden && p.forbidden <= 1) || !unit(p.deflt) {
		return nil, bad("thresholds must satisfy 0 <= portal_threshold <= forbidden_threshold <= 1 (R-185)")
	}
	if c.DecisionTTLSeconds < 0 || c.DecisionTTLSeconds > 600 {
		return nil, bad("decision_ttl_seconds must be between 1 and 600")
	} else if c.DecisionTTLSeconds > 0 {
		p.ttl = time.Duration(c.DecisionTTLSeconds) * time.Second
	}
	for _, step := range []func(Config) error{p.categories, p.parseLabels, p.parsePurposes, p.parseTargets, p.parseRecipients} {
		if err := step(c); err != nil {
			return nil, bad("%s", err.Error())
		}
	}
	canon, _ := json.Marshal(c) // struct fields encode in a fixed order; map keys sorted
	p.revision = sha256.Sum256(append([]byte("coagent8 egress policy v1\x00"), canon...))
	return p, nil
}

func unit(v float64) bool { return v >= 0 && v <= 1 }

func (p *Policy) categories(c Config) error {
	for _, k := range c.NonDeclassifiable {
		if !k.valid() {
			return fmt.Errorf("unknown category %q", k)
		}
		p.nonDecl[k] = true
	}
	return nil
}

func (p *Policy) parseLabels(c Config) error {
	for _, lc := range c.Labels {
		l, err := parseLabel(lc)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(p.labels, func(o label) bool { return o.name == l.name }) {
			return fmt.Errorf("duplicate label %q", l.name)
		}
		p.labels = append(p.labels, l)
	}
	return nil
}

func parseLabel(lc LabelConfig) (label, error) {
	l := label{name: lc.Name, weight: lc.Classification, category: lc.Category}
	switch {
	case !labelName().MatchString(lc.Name):
		return label{}, fmt.Errorf("label name %q must match %s", lc.Name, labelName())
	case !unit(lc.Classification):
		return label{}, fmt.Errorf("label %q: classification must be within 0..1", lc.Name)
	case !lc.Category.valid():
		return label{}, fmt.Errorf("label %q: unknown category %q", lc.Name, lc.Category)
	case len(lc.Paths) == 0 && len(lc.Patterns) == 0:
		return label{}, fmt.Errorf("label %q: needs paths or patterns", lc.Name)
	}
	for _, g := range lc.Paths {
		if !lineage.ValidGlob(filepath.ToSlash(g)) {
			return label{}, fmt.Errorf("label %q: invalid path glob %q", lc.Name, g)
		}
		l.paths = append(l.paths, filepath.ToSlash(g))
	}
	for _, s := range lc.Patterns {
		re, err := regexp.Compile(s)
		if err != nil || s == "" {
			return label{}, fmt.Errorf("label %q: invalid pattern", lc.Name)
		}
		l.patterns = append(l.patterns, re)
	}
	return l, nil
}

func (p *Policy) parsePurposes(c Config) error {
	for k, v := range c.Purposes {
		if !k.valid() {
			return fmt.Errorf("unknown purpose %q (known: %s, %s)", k, ProviderRequest, DiagnosticRecording)
		}
		if v.MaxUses <= 0 || v.MaxBytes <= 0 {
			return fmt.Errorf("purpose %q: max_uses and max_bytes must be positive (no unlimited account)", k)
		}
		p.purposes[k] = v
	}
	return nil
}

func (p *Policy) parseTargets(c Config) error {
	for _, t := range c.Targets {
		if t.Provider != "anthropic" && t.Provider != "openai" {
			return fmt.Errorf("target rule: unknown provider %q", t.Provider)
		}
		if t.PortalThreshold != nil && !(0 <= *t.PortalThreshold && *t.PortalThreshold <= p.portal) {
			return fmt.Errorf("target rule for %s: portal_threshold may only narrow (<= %v)", t.Provider, p.portal)
		}
		if t.ForbiddenThreshold != nil && !(0 <= *t.ForbiddenThreshold && *t.ForbiddenThreshold <= p.forbidden) {
			return fmt.Errorf("target rule for %s: forbidden_threshold may only narrow (<= %v)", t.Provider, p.forbidden)
		}
		for _, k := range t.NonDeclassifiable {
			if !k.valid() {
				return fmt.Errorf("target rule for %s: unknown category %q", t.Provider, k)
			}
		}
		for _, pu := range t.DenyPurposes {
			if !pu.valid() {
				return fmt.Errorf("target rule for %s: unknown purpose %q", t.Provider, pu)
			}
		}
		p.targets = append(p.targets, t)
	}
	return nil
}

// Revision returns the policy revision: a digest of the validated
// configuration. Restricted local evidence; export it only through
// EvidenceDigest@1.
func (p *Policy) Revision() [32]byte { return p.revision }

// PathGlobs returns, per label index, the label's path globs, for
// [lineage.NewWorkspace]. Labels without paths have an empty list.
func (p *Policy) PathGlobs() [][]string {
	out := make([][]string, len(p.labels))
	for i, l := range p.labels {
		out[i] = slices.Clone(l.paths)
	}
	return out
}

// dependsOnLineage reports whether any label classifies by path.
func (p *Policy) dependsOnLineage() bool {
	return slices.ContainsFunc(p.labels, func(l label) bool { return len(l.paths) > 0 })
}
