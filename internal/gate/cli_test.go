package gate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/providertest"
)

// pinnedCLI returns <module root>/.tools/node_modules/.bin/name, failing
// (never skipping) when it is missing.
func pinnedCLI(t *testing.T, name string) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("module root not found")
		}
		dir = filepath.Dir(dir)
	}
	p := filepath.Join(dir, ".tools", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("pinned %s missing at %s; install it with scripts/install.sh", name, p)
	}
	return p
}

// runCLI runs a CLI with exactly env, checking the real keys are absent.
func runCLI(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	for _, kv := range env {
		if strings.Contains(kv, "canary") {
			t.Fatalf("real key in the CLI environment")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, t.TempDir()
	cmd.Stdin = strings.NewReader("Reply with the word from the double.")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(bin), err, out)
	}
	return string(out)
}

// checkUpstream asserts the double saw only the real key.
func checkUpstream(t *testing.T, reqs []providertest.Request, real, phantom string) {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatal("no request reached the provider double")
	}
	for _, r := range reqs {
		if r.Credential() != real {
			t.Errorf("%s %s: double did not get the real key", r.Method, r.Path)
		}
		for _, v := range r.Header {
			if strings.Contains(strings.Join(v, ""), phantom) {
				t.Errorf("phantom credential reached the double")
			}
		}
	}
}

func TestClaudeCodeThroughGate(t *testing.T) {
	bin := pinnedCLI(t, "claude")
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Text: "GATED-ANSWER-7", InputTokens: 20, OutputTokens: 5})
	s := spec(Anthropic)
	gr, phantom := f.grant(s)
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + config.FromOS().Get("PATH"), "ANTHROPIC_BASE_URL=" + f.srv.URL,
		"ANTHROPIC_API_KEY=" + phantom, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	out := runCLI(t, bin, env, "-p", "--output-format", "stream-json", "--verbose", "--model", s.Model, "--tools", "")
	if !strings.Contains(out, "GATED-ANSWER-7") {
		t.Fatalf("answer missing:\n%s", out)
	}
	checkUpstream(t, f.anth.Requests(), realKey(Anthropic), phantom)
	if got := f.settled(gr.ID).Used; got.Requests < 1 || got.Tokens < 25 {
		t.Errorf("used %+v", got)
	}
}

func TestCodexThroughGate(t *testing.T) {
	bin := pinnedCLI(t, "codex")
	f := newFixture(t, nil)
	f.oai.Script(providertest.Reply{Text: "GATED-ANSWER-8", InputTokens: 20, OutputTokens: 5})
	s := spec(OpenAI)
	gr, phantom := f.grant(s)
	home := t.TempDir()
	env := []string{"HOME=" + home, "CODEX_HOME=" + home, "PATH=" + config.FromOS().Get("PATH"), "GATE_PHANTOM=" + phantom}
	out := runCLI(t, bin, env, "exec", "--json", "--skip-git-repo-check", "-c", `web_search="disabled"`, // the gate refuses the hosted tool
		"-c", "model_provider=gate", "-c", `model_providers.gate.name="coagent8 gate"`,
		"-c", `model_providers.gate.base_url="`+f.srv.URL+`/v1"`,
		"-c", `model_providers.gate.env_key="GATE_PHANTOM"`, "-c", `model_providers.gate.wire_api="responses"`,
		"-m", s.Model, "-")
	if !strings.Contains(out, "GATED-ANSWER-8") {
		t.Fatalf("answer missing:\n%s", out)
	}
	checkUpstream(t, f.oai.Requests(), realKey(OpenAI), phantom)
	if got := f.settled(gr.ID).Used; got.Requests < 1 || got.Tokens < 25 {
		t.Errorf("used %+v", got)
	}
	for _, e := range f.events.Events() {
		if e.Code != "" {
			t.Errorf("codex turn hit a refusal: %+v", e)
		}
	}
}
