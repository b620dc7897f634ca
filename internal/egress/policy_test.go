package egress

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/evidence"
	"github.com/coagent8/coagent8/internal/store"
)

func TestPolicyValidation(t *testing.T) {
	tests := []struct {
		name string
		mod  func(c *Config)
		want string // "" = valid
	}{
		{"baseline", func(*Config) {}, ""},
		{"portal above forbidden", func(c *Config) { c.PortalThreshold, c.ForbiddenThreshold = f64(0.9), f64(0.5) }, "R-185"},
		{"threshold above 1", func(c *Config) { c.ForbiddenThreshold = f64(1.5) }, "R-185"},
		{"missing threshold", func(c *Config) { c.PortalThreshold = nil }, "required"},
		{"target widens portal", func(c *Config) {
			c.Targets = []TargetRule{{Provider: "anthropic", PortalThreshold: f64(0.5)}}
		}, "only narrow"},
		{"target widens forbidden", func(c *Config) {
			c.Targets = []TargetRule{{Provider: "openai", ForbiddenThreshold: f64(0.95)}}
		}, "only narrow"},
		{"target narrows", func(c *Config) {
			c.Targets = []TargetRule{{Provider: "openai", PortalThreshold: f64(0.1), ForbiddenThreshold: f64(0.2)}}
		}, ""},
		{"unknown purpose", func(c *Config) { c.Purposes["my-purpose"] = PurposeConfig{MaxUses: 1, MaxBytes: 1} }, "unknown purpose"},
		{"unlimited purpose", func(c *Config) { c.Purposes[ProviderRequest] = PurposeConfig{MaxUses: 0, MaxBytes: 1} }, "positive"},
		{"unknown category", func(c *Config) { c.Labels[0].Category = "secret-stuff" }, "unknown category"},
		{"label weight", func(c *Config) { c.Labels[0].Classification = 1.2 }, "within 0..1"},
		{"escaping glob", func(c *Config) { c.Labels[0].Paths = []string{"../outside/**"} }, "invalid path glob"},
		{"bad pattern", func(c *Config) { c.Labels[3].Patterns = []string{"("} }, "invalid pattern"},
		{"empty label", func(c *Config) { c.Labels[0].Paths = nil }, "needs paths or patterns"},
		{"duplicate label", func(c *Config) { c.Labels[1].Name = "deal" }, "duplicate label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseConfig()
			tt.mod(&c)
			_, err := NewPolicy(c)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
}

// TestParseConfigStrict: unknown fields are refused, so a URL, host or
// credential cannot be added to the diagnostic-recording purpose.
func TestParseConfigStrict(t *testing.T) {
	good := `{"portal_threshold":0.3,"forbidden_threshold":0.8,"purposes":{"closed-diagnostic-recording":{"max_uses":2,"max_bytes":1000}}}`
	if _, err := ParseConfig(json.RawMessage(good)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"portal_threshold":0.3,"forbidden_threshold":0.8,"purposes":{"closed-diagnostic-recording":{"max_uses":2,"max_bytes":1000,"url":"https://x"}}}`,
		`{"portal_threshold":0.3,"forbidden_threshold":0.8,"upstream":"https://x"}`,
		`{"portal_threshold":0.3} {}`,
	} {
		if _, err := ParseConfig(json.RawMessage(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// TestTargetNarrowing: a target rule lowers the thresholds for its
// provider only.
func TestTargetNarrowing(t *testing.T) {
	c := baseConfig()
	c.Targets = []TargetRule{{Provider: "anthropic", Model: "claude-test", PortalThreshold: f64(0.2)}}
	f := newFixture(t, c)
	if _, err := f.d.Seal(context.Background(), tx(t, internalNotes)); err != nil {
		dec, _, _ := f.d.Decide(context.Background(), tx(t, internalNotes))
		t.Fatalf("0.29 under a 0.2 target portal: %v %v", err, dec)
	}
	dec, _, _ := f.d.Decide(context.Background(), tx(t, internalNotes))
	if dec.Reason() != ReasonFiltered {
		t.Errorf("0.29 under a 0.2 target portal: %s", dec.Reason())
	}
	c.Targets[0].DenyPurposes = []Purpose{ProviderRequest}
	f = newFixture(t, c)
	if _, err := f.d.Seal(context.Background(), tx(t, "Public readme.")); reasonOf(err) != ReasonPurpose {
		t.Errorf("denied purpose: %v", err)
	}
}

// TestConcurrentSealsNeverExceedCapacity (run under -race): 30 parallel
// transmissions against 7 uses → exactly 7 admitted.
func TestConcurrentSealsNeverExceedCapacity(t *testing.T) {
	c := baseConfig()
	c.Purposes[ProviderRequest] = PurposeConfig{MaxUses: 7, MaxBytes: 1 << 30}
	f := newFixture(t, c)
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			_, err := f.d.Seal(context.Background(), tx(t, "Public readme."))
			switch reasonOf(err) {
			case "":
				ok.Add(1)
			case ReasonUsesExhausted:
				refused.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 7 || refused.Load() != 23 {
		t.Errorf("admitted %d refused %d", ok.Load(), refused.Load())
	}
}

// TestCapacitySurvivesRestartAndRename: exhaust, reopen the
// database file with a renamed purpose label, a new job id and a new
// policy revision → still refused; changed ceilings → config_conflict.
func TestCapacitySurvivesRestartAndRename(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	key, _ := evidence.LoadKey(filepath.Join(dir, "k"))
	open := func(c Config) (*Decider, *store.DB) {
		db, err := store.Open(ctx, filepath.Join(dir, "state.db"), 0)
		if err != nil {
			t.Fatal(err)
		}
		led, err := ledger.Open(ctx, db, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := New(Options{Policy: mustPolicy(t, c), Ledger: led, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		return d, db
	}
	c := Config{PortalThreshold: f64(0.3), ForbiddenThreshold: f64(0.8),
		Purposes: map[Purpose]PurposeConfig{ProviderRequest: {Label: "calls", MaxUses: 2, MaxBytes: 1 << 20}}}
	d, db := open(c)
	for range 2 {
		if _, err := d.Seal(ctx, tx(t, "hello")); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	c.Purposes[ProviderRequest] = PurposeConfig{Label: "renamed calls", MaxUses: 2, MaxBytes: 1 << 20}
	c.DefaultClassification = 0.1 // new policy revision
	d, db = open(c)
	x := tx(t, "hello")
	x.Job = "a-brand-new-job"
	if _, err := d.Seal(ctx, x); reasonOf(err) != ReasonUsesExhausted {
		t.Errorf("after restart+rename: %v", err)
	}
	db.Close()
	c.Purposes[ProviderRequest] = PurposeConfig{Label: "calls", MaxUses: 50, MaxBytes: 1 << 20}
	d, db = open(c)
	defer db.Close()
	if _, err := d.Seal(ctx, x); reasonOf(err) != ReasonConfigConflict {
		t.Errorf("raised ceiling: %v", err)
	}
}

// TestRecipientFacts: a policy that depends on retention or training
// facts refuses a target whose facts the configuration does not state
// (egress.unknown_recipient_fact) or states against it
// (egress.recipient_fact); without requirements nothing depends on them
// (issue 18 scope 5).
func TestRecipientFacts(t *testing.T) {
	days := func(n int) *int { return &n }
	yes, no := true, false
	tests := []struct {
		name     string
		facts    map[string]RecipientFacts
		requires *RecipientRequirements
		want     string
	}{
		{"no requirement, no facts", nil, nil, ""},
		{"retention required, unknown", nil, &RecipientRequirements{MaxRetentionDays: days(30)}, ReasonUnknownFact},
		{"retention required, too long", map[string]RecipientFacts{"anthropic": {RetentionDays: days(90)}}, &RecipientRequirements{MaxRetentionDays: days(30)}, ReasonRecipientFact},
		{"retention required, stated within", map[string]RecipientFacts{"anthropic": {RetentionDays: days(0)}}, &RecipientRequirements{MaxRetentionDays: days(30)}, ""},
		{"no training, unknown", map[string]RecipientFacts{"anthropic": {RetentionDays: days(0)}}, &RecipientRequirements{NoTraining: true}, ReasonUnknownFact},
		{"no training, trains", map[string]RecipientFacts{"anthropic": {TrainingUse: &yes}}, &RecipientRequirements{NoTraining: true}, ReasonRecipientFact},
		{"no training, stated", map[string]RecipientFacts{"anthropic": {TrainingUse: &no}}, &RecipientRequirements{NoTraining: true}, ""},
		{"facts of another provider do not count", map[string]RecipientFacts{"openai": {TrainingUse: &no}}, &RecipientRequirements{NoTraining: true}, ReasonUnknownFact},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseConfig()
			c.Recipients, c.Requires = tt.facts, tt.requires
			f := newFixture(t, c)
			_, err := f.d.Seal(context.Background(), tx(t, "Public readme."))
			if got := reasonOf(err); got != tt.want {
				t.Errorf("got %q want %q", got, tt.want)
			}
		})
	}
}

func TestRecipientFactsValidated(t *testing.T) {
	neg := -1
	for name, c := range map[string]func(*Config){
		"unknown provider":   func(c *Config) { c.Recipients = map[string]RecipientFacts{"gemini": {}} },
		"negative retention": func(c *Config) { c.Recipients = map[string]RecipientFacts{"openai": {RetentionDays: &neg}} },
		"negative maximum":   func(c *Config) { c.Requires = &RecipientRequirements{MaxRetentionDays: &neg} },
	} {
		cfg := baseConfig()
		c(&cfg)
		if _, err := NewPolicy(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestIntermediaryFacts: every configured intermediary of the custody
// route is a recipient; a requirement it does not state refuses
// (egress.unknown_recipient_fact), one it states against refuses
// (egress.recipient_fact), and the facts are matched by canonical origin
// (issue 18 scope 5).
func TestIntermediaryFacts(t *testing.T) {
	days := func(n int) *int { return &n }
	yes, no := true, false
	const proxy = "https://relay.example:3128"
	provider := map[string]RecipientFacts{"anthropic": {RetentionDays: days(0), TrainingUse: &no}}
	tests := []struct {
		name     string
		hops     []string
		facts    map[string]RecipientFacts
		requires *RecipientRequirements
		want     string
	}{
		{"no intermediary", nil, nil, &RecipientRequirements{NoTraining: true}, ""},
		{"intermediary, no requirement", []string{proxy}, nil, nil, ""},
		{"intermediary facts unstated", []string{proxy}, nil, &RecipientRequirements{NoTraining: true}, ReasonUnknownFact},
		{"intermediary retention unstated", []string{proxy}, map[string]RecipientFacts{proxy: {TrainingUse: &no}}, &RecipientRequirements{MaxRetentionDays: days(0)}, ReasonUnknownFact},
		{"intermediary trains", []string{proxy}, map[string]RecipientFacts{proxy: {TrainingUse: &yes}}, &RecipientRequirements{NoTraining: true}, ReasonRecipientFact},
		{"intermediary stated", []string{proxy}, map[string]RecipientFacts{proxy: {TrainingUse: &no}}, &RecipientRequirements{NoTraining: true}, ""},
		{"stated under a non-canonical spelling", []string{"HTTPS://RELAY.EXAMPLE:3128"}, map[string]RecipientFacts{proxy: {TrainingUse: &no}}, &RecipientRequirements{NoTraining: true}, ""},
		{"facts of another intermediary do not count", []string{proxy}, map[string]RecipientFacts{"https://other.example": {TrainingUse: &no}}, &RecipientRequirements{NoTraining: true}, ReasonUnknownFact},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseConfig()
			c.Recipients, c.Intermediaries, c.Requires = provider, tt.facts, tt.requires
			f := newFixture(t, c)
			x := tx(t, "Public readme.")
			p := x.Target.(PortalTarget)
			p.Intermediaries = tt.hops
			x.Target = p
			_, err := f.d.Seal(context.Background(), x)
			if got := reasonOf(err); got != tt.want {
				t.Errorf("got %q want %q", got, tt.want)
			}
		})
	}
}

func TestIntermediaryFactsValidated(t *testing.T) {
	neg := -1
	for name, facts := range map[string]map[string]RecipientFacts{
		"not an origin":      {"relay.example": {}},
		"path":               {"https://relay.example/x": {}},
		"user info":          {"https://u:p@relay.example": {}},
		"scheme":             {"socks5://relay.example": {}},
		"negative retention": {"https://relay.example": {RetentionDays: &neg}},
		"stated twice":       {"https://relay.example": {}, "HTTPS://relay.example:443": {}},
	} {
		cfg := baseConfig()
		cfg.Intermediaries = facts
		if _, err := NewPolicy(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
