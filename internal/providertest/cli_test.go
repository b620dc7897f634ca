package providertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/config"
)

// toolPath returns the pinned CLI installed under <module root>/.tools.
func toolPath(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("module root (go.mod) not found above the test directory")
		}
		dir = parent
	}
	p := filepath.Join(dir, ".tools", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("pinned CLI %s missing at %s (run scripts/install.sh): %v", name, p, err)
	}
	return p
}

func runCLI(t *testing.T, bin string, env []string, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(bin), args, err, out)
	}
	return string(out)
}

// TestClaudeCodeTurn runs the pinned Claude Code against the double.
func TestClaudeCodeTurn(t *testing.T) {
	bin := toolPath(t, "claude")
	a := NewAnthropic(t, Options{Default: Reply{Text: "PONG-from-double"}})
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + config.FromOS().Get("PATH"), "ANTHROPIC_BASE_URL=" + a.URL(),
		"ANTHROPIC_API_KEY=test-key-claude", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	out := runCLI(t, bin, env, "say pong", "-p", "--output-format", "stream-json", "--verbose",
		"--model", "claude-sonnet-4-5", "--tools", "")
	if !strings.Contains(out, "PONG-from-double") {
		t.Errorf("answer missing from output:\n%s", out)
	}
	for _, r := range a.Requests() {
		t.Logf("claude sent %s %s?%s", r.Method, r.Path, r.RawQuery)
	}
}

// TestCodexTurn runs the pinned Codex against the double.
func TestCodexTurn(t *testing.T) {
	bin := toolPath(t, "codex")
	o := NewOpenAI(t, Options{Default: Reply{Text: "PONG-from-double"}})
	home := t.TempDir()
	env := []string{"HOME=" + home, "CODEX_HOME=" + home, "PATH=" + config.FromOS().Get("PATH"), "FAKE_KEY=test-key-codex"}
	out := runCLI(t, bin, env, "say pong", "exec", "--json", "--skip-git-repo-check",
		"-c", "model_provider=fake", "-c", `model_providers.fake.name="fake"`,
		"-c", `model_providers.fake.base_url="`+o.URL()+`/v1"`,
		"-c", `model_providers.fake.env_key="FAKE_KEY"`, "-c", `model_providers.fake.wire_api="responses"`,
		"-m", "gpt-5.1", "-")
	if !strings.Contains(out, "PONG-from-double") {
		t.Errorf("answer missing from output:\n%s", out)
	}
	for _, r := range o.Requests() {
		t.Logf("codex sent %s %s?%s auth=%v", r.Method, r.Path, r.RawQuery, r.Credential() == "test-key-codex")
	}
}
