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

// runCLIOutput is runCLI for a turn expected to fail: it returns the
// combined output whatever the exit status.
func runCLIOutput(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, t.TempDir()
	cmd.Stdin = strings.NewReader("Reply with the word from the double.")
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// TestCLIsNeverSeeAnEchoedKey: the real CLIs, through the gate, against
// doubles whose 200 stream carries an error event echoing the real key:
// the CLI's output never holds the key and the gate records the echo
// (issue 18 scope 2).
func TestCLIsNeverSeeAnEchoedKey(t *testing.T) {
	tests := []struct {
		name     string
		provider Provider
		echo     providertest.Echo
	}{
		{"claude code, event: error", Anthropic, providertest.EchoErrorEvent},
		{"codex, response.failed", OpenAI, providertest.EchoResponseFailed},
		{"codex, error event", OpenAI, providertest.EchoErrorEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			rep := providertest.Reply{Chunks: 4, Text: "ECHO-ANSWER-1234", Echo: tt.echo}
			f.anth.Script(rep)
			f.oai.Script(rep)
			s := spec(tt.provider)
			_, phantom := f.grant(s)
			out := runEchoCLI(t, f, tt.provider, s.Model, phantom)
			if strings.Contains(out, realKey(tt.provider)) || strings.Contains(out, "canary") {
				t.Errorf("the CLI received the real key:\n%s", out)
			}
			if tt.provider == OpenAI && !strings.Contains(out, "withheld") {
				t.Errorf("codex did not report the gate's generic error:\n%s", out)
			}
			if len(f.anth.Requests())+len(f.oai.Requests()) == 0 {
				t.Fatalf("no request reached the double:\n%s", out)
			}
			if n := countReason(f.events.Events(), ReasonEcho); n < 1 {
				t.Errorf("no %s event; CLI output:\n%s", ReasonEcho, out)
			}
		})
	}
}

func runEchoCLI(t *testing.T, f *fixture, p Provider, model, phantom string) string {
	home := t.TempDir()
	path := "PATH=" + config.FromOS().Get("PATH")
	if p == Anthropic {
		env := []string{"HOME=" + home, path, "ANTHROPIC_BASE_URL=" + f.srv.URL, "ANTHROPIC_API_KEY=" + phantom,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=0"}
		return runCLIOutput(t, pinnedCLI(t, "claude"), env, "-p", "--output-format", "stream-json", "--verbose",
			"--model", model, "--tools", "")
	}
	env := []string{"HOME=" + home, "CODEX_HOME=" + home, path, "GATE_PHANTOM=" + phantom}
	return runCLIOutput(t, pinnedCLI(t, "codex"), env, "exec", "--json", "--skip-git-repo-check", "-c", `web_search="disabled"`, // the gate refuses the hosted tool
		"-c", "model_provider=gate", "-c", `model_providers.gate.name="coagent8 gate"`,
		"-c", `model_providers.gate.base_url="`+f.srv.URL+`/v1"`,
		"-c", `model_providers.gate.env_key="GATE_PHANTOM"`, "-c", `model_providers.gate.wire_api="responses"`,
		"-c", "model_providers.gate.stream_max_retries=0", "-c", "model_providers.gate.request_max_retries=0",
		"-m", model, "-")
}
