package egress

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/egress/lineage"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/evidence"
	"github.com/coagent8/coagent8/internal/store"
)

// dealNotes is a private file of the fixture workspace.
const dealNotes = "Project Nightingale acquisition notes: target valuation 41.7M, board vote on the 14th; do not share outside the deal team.\n"

// internalNotes is a file labelled below the portal threshold.
const internalNotes = "Team offsite agenda: roadmap review in the morning, retro after lunch, dinner at seven.\n"

func f64(v float64) *float64 { return &v }

// baseConfig: portal 0.3, forbidden 0.8 (the R-184 example).
func baseConfig() Config {
	return Config{PortalThreshold: f64(0.3), ForbiddenThreshold: f64(0.8),
		Labels: []LabelConfig{
			{Name: "deal", Paths: []string{"private/**"}, Classification: 0.5, Category: Confidential},
			{Name: "team", Paths: []string{"team/*.md"}, Classification: 0.29, Category: Internal},
			{Name: "hr", Paths: []string{"hr/**"}, Classification: 0.9, Category: PersonalData},
			{Name: "ssn", Patterns: []string{`\b\d{3}-\d{2}-\d{4}\b`}, Classification: 0.1, Category: PersonalData},
		},
		NonDeclassifiable: []Category{PersonalData},
		Purposes: map[Purpose]PurposeConfig{
			ProviderRequest:     {Label: "model calls", MaxUses: 100, MaxBytes: 1 << 30},
			DiagnosticRecording: {MaxUses: 2, MaxBytes: 1000}},
	}
}

type fixture struct {
	t      *testing.T
	d      *Decider
	led    *ledger.Ledger
	db     *store.DB
	root   string
	events *event.Memory
	clock  time.Time
}

func workspace(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range map[string]string{"private/deal.md": dealNotes, "team/offsite.md": internalNotes,
		"hr/review.txt": "Performance review for a named employee: needs improvement in communication.\n",
		"README.md":     "Public readme.\n"} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func newFixture(t *testing.T, c Config) *fixture {
	t.Helper()
	f := newFixtureB(t, c)
	f.t = t
	return f
}

// newFixtureB builds the fixture for a test or a benchmark.
func newFixtureB(t testing.TB, c Config) *fixture {
	t.Helper()
	f := &fixture{root: workspace(t), events: &event.Memory{}, clock: time.Unix(1_800_000_000, 0)}
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db = db
	f.led, err = ledger.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := evidence.LoadKey(filepath.Join(dir, "evidence.key"))
	if err != nil {
		t.Fatal(err)
	}
	p := mustPolicy(t, c)
	ws, err := lineage.NewWorkspace(f.root, p.PathGlobs())
	if err != nil {
		t.Fatal(err)
	}
	f.d, err = New(Options{Policy: p, Lineage: ws, Ledger: f.led, Key: key, Events: f.events,
		Now: func() time.Time { return f.clock }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustPolicy(t testing.TB, c Config) *Policy {
	t.Helper()
	p, err := NewPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// request is an Anthropic Messages body whose user turn carries text
// (as Claude Code sends a Read tool result).
func request(t *testing.T, text string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"model": "claude-test", "max_tokens": 100, "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": text}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func portal() PortalTarget {
	return PortalTarget{Provider: "anthropic", Operation: "/v1/messages", Model: "claude-test",
		Origin: "https://api.anthropic.com", RequestTarget: "/v1/messages?beta=true"}
}

func tx(t *testing.T, text string) Transmission {
	return Transmission{Job: "job-1", Purpose: ProviderRequest, Target: portal(), Body: request(t, text), JSON: true,
		Method: "POST", Headers: []Header{{"Anthropic-Version", "2023-06-01"}, {"X-Api-Key", CredentialPlaceholder}}}
}

// syntheticKey is an Anthropic-shaped key built at run time (never real).
func syntheticKey() string { return "sk-ant-api03-" + strings.Repeat("Q", 40) + "AA" }
