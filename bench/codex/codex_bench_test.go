//go:build bench

// Package codex benchmarks the Codex backend (codex app-server with the
// verified read-only profile, one process per turn) against a direct
// `codex exec --json` of the same prompt, both against the same local
// Responses double and the same CODEX_HOME, interleaved in one run.
//
// Run: bash bench/codex/run.sh
package codex

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/adapter/codex"
	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/providertest"
)

const (
	rounds = 15
	prompt = "Summarise the design of a read-only code review in one sentence."
	answer = "benchmark answer from the double"
)

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func TestCodexOverhead(t *testing.T) {
	cli := clitest.Path(t, "codex")
	dbl := providertest.NewOpenAI(t, providertest.Options{Default: providertest.Reply{Text: answer, Chunks: 4}})
	home, ws := t.TempDir(), t.TempDir()
	toml := `model = "gpt-5.1"
model_provider = "fake"
[model_providers.fake]
name = "fake"
base_url = "` + dbl.URL() + `/v1"
env_key = "BENCH_KEY"
wire_api = "responses"
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := []string{"HOME=" + home, "CODEX_HOME=" + home, "PATH=" + config.FromOS().Get("PATH"),
		"CODEX_PATH=" + cli, "BENCH_KEY=bench-key"}
	b, err := codex.New(config.FromList(vars), codex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var tB, tD []time.Duration
	for i := 0; i < rounds+1; i++ { // round 0 warms caches and is dropped
		d1 := viaBackend(t, b, ws)
		d2 := direct(t, cli, vars, ws)
		if i > 0 {
			tB, tD = append(tB, d1), append(tD, d2)
		}
	}
	mb, md := median(tB), median(tD)
	t.Logf("codex backend (app-server, verified)  median %v over %d turns", mb.Round(time.Millisecond), rounds)
	t.Logf("direct codex exec --json               median %v over %d turns", md.Round(time.Millisecond), rounds)
	t.Logf("overhead ratio %.2fx (added %v per turn)", float64(mb)/float64(md), (mb - md).Round(time.Millisecond))
}

func viaBackend(t *testing.T, b *codex.Backend, ws string) time.Duration {
	start := time.Now()
	res, err := b.Run(context.Background(), adapter.Turn{Prompt: prompt, Workspace: ws, Deadline: time.Minute, IdleTimeout: time.Minute})
	d := time.Since(start)
	if err != nil || res.Text != answer {
		t.Fatalf("backend turn: %v %q", err, res.Text)
	}
	return d
}

func direct(t *testing.T, cli string, env []string, ws string) time.Duration {
	cmd := exec.Command(cli, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "-s", "read-only", "-")
	cmd.Env, cmd.Dir, cmd.Stdin = env, ws, strings.NewReader(prompt)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil || !strings.Contains(string(out), answer) {
		t.Fatalf("codex exec: %v\n%s", err, out)
	}
	return d
}
