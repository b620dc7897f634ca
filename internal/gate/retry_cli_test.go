package gate

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/providertest"
)

// TestClaudeCodeDoesNotRetryBudgetRefusal: a request whose reservation
// the whole grant cannot cover is answered 402 (billing_error) with a
// message the pinned Claude Code prints after one attempt — before issue
// 19 item 14 it was 429 and the CLI retried with backoff for minutes.
func TestClaudeCodeDoesNotRetryBudgetRefusal(t *testing.T) {
	bin := pinnedCLI(t, "claude")
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Text: "NEVER-SENT", InputTokens: 20, OutputTokens: 5})
	s := spec(Anthropic)
	s.MaxSpend, s.OutputCeiling = USD(0.001), 1 // Claude Code asks for far more than 1 output token
	gr, phantom := f.grant(s)
	env := []string{"HOME=" + t.TempDir(), "PATH=" + config.FromOS().Get("PATH"), "ANTHROPIC_BASE_URL=" + f.srv.URL,
		"ANTHROPIC_API_KEY=" + phantom, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-p", "--model", s.Model, "--tools", "")
	cmd.Env, cmd.Dir = env, t.TempDir()
	cmd.Stdin = strings.NewReader("Reply with the word from the double.")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	t.Logf("exit %v after %v:\n%s", err, took, out)
	if err == nil {
		t.Errorf("claude succeeded against a refused grant")
	}
	if took > 45*time.Second {
		t.Errorf("claude took %v: it retried a final refusal", took)
	}
	if !strings.Contains(string(out), "budget.request_spend") || !strings.Contains(string(out), "--max-usd of at least") {
		t.Errorf("claude did not print the gate's message:\n%s", out)
	}
	if n := countReason(f.events.Events(), ReasonRequestSpend); n != 1 {
		t.Errorf("%d refused attempts, want exactly 1 (no retry)", n)
	}
	if len(f.anth.Requests()) != 0 {
		t.Errorf("a refused request reached the provider double")
	}
	if u := f.settled(gr.ID).Used; u != (Counters{}) {
		t.Errorf("refused request consumed %+v", u)
	}
}
