package egress_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/egress/lineage"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/evidence"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/secret"
	"github.com/coagent8/coagent8/internal/store"
)

// privateText is the labelled file's content; privateWord must never
// reach the provider double.
const (
	privateWord = "Nightingale"
	privateText = "Project Nightingale acquisition notes: target valuation 41.7M, board vote on the 14th; do not share outside the deal team.\n"
	model       = "claude-sonnet-4-5"
)

func realKey() string {
	return "sk-ant-api03-" + strings.Repeat("Y", 24) + "canary" + strings.Repeat("7", 12)
}

// run starts gate + egress decider in front of a double that asks Claude
// Code to Read the labelled file, runs the real CLI and returns the
// requests the double received and the CLI output.
func run(t *testing.T, weight float64) ([]providertest.Request, string, *event.Memory) {
	t.Helper()
	ctx := context.Background()
	ws, dir := t.TempDir(), t.TempDir()
	file := filepath.Join(ws, "private", "deal.md")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(privateText), 0o644)
	db, err := store.Open(ctx, filepath.Join(dir, "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	led, err := ledger.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := evidence.LoadKey(filepath.Join(dir, "evidence.key"))
	portal, forbidden := 0.3, 0.8
	pol, err := egress.NewPolicy(egress.Config{PortalThreshold: &portal, ForbiddenThreshold: &forbidden,
		Labels:   []egress.LabelConfig{{Name: "deal", Paths: []string{"private/**"}, Classification: weight, Category: egress.Confidential}},
		Purposes: map[egress.Purpose]egress.PurposeConfig{egress.ProviderRequest: {MaxUses: 100, MaxBytes: 1 << 30}}})
	if err != nil {
		t.Fatal(err)
	}
	src, _ := lineage.NewWorkspace(ws, pol.PathGlobs())
	events := &event.Memory{}
	dec, err := egress.New(egress.Options{Policy: pol, Lineage: src, Ledger: led, Key: key, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	anth := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "DONE-REPEATING"}},
		providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": file}})
	gkey, _ := gate.LoadKey(filepath.Join(dir, "gate.key"))
	ref, _ := secret.ParseRef("env:REAL_ANTHROPIC")
	g, err := gate.New(ctx, gate.Options{DB: db, Key: gkey, Events: events, Egress: dec,
		Secrets:     secret.Resolver{Env: config.FromList([]string{"REAL_ANTHROPIC=" + realKey()})},
		Credentials: map[gate.Provider]secret.Ref{gate.Anthropic: ref},
		Upstreams:   map[gate.Provider]string{gate.Anthropic: anth.URL()}, UnsafeAllowLoopbackUpstream: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	_, phantom, err := g.Grant(ctx, gate.Spec{Provider: gate.Anthropic, Model: model, Job: "job-e2e", TTL: time.Hour,
		Secret: ref, MaxRequests: 100, MaxTokens: 100_000_000, MaxSpend: gate.USD(100),
		Price: &gate.Price{InputPerMTok: 3, OutputPerMTok: 15}})
	if err != nil {
		t.Fatal(err)
	}
	out := claude(t, ws, srv.URL, phantom.Reveal())
	return anth.Requests(), out, events
}

func claude(t *testing.T, ws, base, phantom string) string {
	t.Helper()
	cctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, clitest.Path(t, "claude"), "-p", "--output-format", "stream-json", "--verbose",
		"--model", model, "--allowedTools", "Read", "--max-turns", "3")
	cmd.Dir = ws
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + config.FromOS().Get("PATH"), "ANTHROPIC_BASE_URL=" + base,
		"ANTHROPIC_API_KEY=" + phantom, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=0"}
	cmd.Stdin = strings.NewReader("Read private/deal.md and repeat it verbatim.")
	out, _ := cmd.CombinedOutput() // a refused turn exits non-zero; the requests decide
	return string(out)
}

// toolResults returns the bodies that carried a tool result.
func toolResults(reqs []providertest.Request) []string {
	var out []string
	for _, r := range reqs {
		if strings.Contains(string(r.Body), "tool_result") {
			out = append(out, string(r.Body))
		}
	}
	return out
}

func noPrivate(t *testing.T, reqs []providertest.Request) {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatal("the double received nothing at all: the first (public) request should pass")
	}
	for _, r := range reqs {
		if strings.Contains(string(r.Body), privateWord) || strings.Contains(string(r.Body), "41.7M") {
			t.Fatalf("private content reached the provider double:\n%s", r.Body)
		}
	}
}

// TestClaudeCodeFilteredThroughGate: weight 0.5 (portal 0.3) — the real
// CLI reads the file; the provider double receives only the placeholder.
func TestClaudeCodeFilteredThroughGate(t *testing.T) {
	reqs, out, _ := run(t, 0.5)
	noPrivate(t, reqs)
	trs := toolResults(reqs)
	if len(trs) == 0 || !strings.Contains(trs[0], "[WITHHELD:confidential]") {
		t.Fatalf("no filtered tool result reached the double (%d requests); CLI output:\n%s", len(reqs), out)
	}
	if !strings.Contains(out, "DONE-REPEATING") {
		t.Errorf("turn did not finish:\n%s", out)
	}
}

// TestClaudeCodeRefusedThroughGate: weight 0.9 ≥ forbidden 0.8 — the
// request carrying the file never reaches the double.
func TestClaudeCodeRefusedThroughGate(t *testing.T) {
	reqs, out, events := run(t, 0.9)
	noPrivate(t, reqs)
	if trs := toolResults(reqs); len(trs) != 0 {
		t.Fatalf("a tool result reached the double: %s", trs[0])
	}
	refused := false
	for _, e := range events.Events() {
		refused = refused || e.Reason == egress.ReasonForbidden
	}
	if !refused {
		t.Errorf("no %s refusal recorded; CLI output:\n%s", egress.ReasonForbidden, out)
	}
}
