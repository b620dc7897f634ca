package codex

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/providertest"
)

// testModel is the model the test config names; the double echoes it.
const testModel = "gpt-5.1"

// harness is one prepared Codex world: a CODEX_HOME with a custom model
// provider pointing at the local Responses double, a git workspace, and
// the environment the backend reads.
type harness struct {
	t         *testing.T
	home      string // HOME and CODEX_HOME
	workspace string
	double    *providertest.OpenAI
	env       config.Env
}

// dummyKey is a synthetic provider credential built at run time.
func dummyKey() string { return "test-" + strings.Repeat("k", 24) }

// newHarness writes config.toml = providerTOML(double) + extra.
func newHarness(t *testing.T, codexPath, extra string, replies ...providertest.Reply) *harness {
	t.Helper()
	h := &harness{t: t, home: t.TempDir(), workspace: gitWorkspace(t)}
	h.double = providertest.NewOpenAI(t, providertest.Options{Replies: replies, Default: providertest.Reply{Text: "default-answer"}})
	h.writeConfig(providerTOML(h.double.URL()) + extra)
	h.env = config.FromList([]string{
		"HOME=" + h.home, "CODEX_HOME=" + h.home, "PATH=" + config.FromOS().Get("PATH"),
		"CODEX_PATH=" + codexPath, "COAGENT8_TEST_KEY=" + dummyKey(),
		"OPENAI_API_KEY=sk-" + strings.Repeat("R", 40), // must never reach the child
	})
	return h
}

func providerTOML(url string) string {
	return `model = "` + testModel + `"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "` + url + `/v1"
env_key = "COAGENT8_TEST_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`
}

func (h *harness) writeConfig(body string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.home, "config.toml"), []byte(body), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) backend(opts Options) *Backend {
	h.t.Helper()
	b, err := New(h.env, opts)
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

func (h *harness) turn(prompt string) adapter.Turn {
	return adapter.Turn{Prompt: prompt, Workspace: h.workspace, Deadline: 90 * time.Second, IdleTimeout: 60 * time.Second}
}

// responses returns the bodies of the model requests the double received.
func (h *harness) responses() []string {
	var out []string
	for _, r := range h.double.Requests() {
		if r.Path == "/v1/responses" {
			out = append(out, string(r.Body))
		}
	}
	return out
}

// gitWorkspace returns a git repository with one commit.
func gitWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "init")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=" + config.FromOS().Get("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// recorder is an adapter.Observer that keeps what it saw.
type recorder struct {
	deltas   strings.Builder
	warnings []string
}

func (r *recorder) Delta(s string)             { r.deltas.WriteString(s) }
func (r *recorder) Activity(kind, name string) {}
func (r *recorder) Warning(msg string)         { r.warnings = append(r.warnings, msg) }
