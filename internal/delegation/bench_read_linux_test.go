//go:build linux && amd64

package delegation

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/adapter/claude"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/providertest"
)

// BenchmarkReadConsult (issue 15 Performance, third bullet) times a
// read-only consult turn of the pinned Claude Code — the claude backend's
// own turn: one Read tool round trip and the answer — on the host (today's
// consult: ANTHROPIC_BASE_URL at the double, the CLI's verified profile)
// and in the read profile (a per-turn grant, the sandbox with the
// workspace projected read-only, the gate with phantom). The two are
// interleaved in one loop so load drift hits both; it reports the
// medians and kernel/host as a ratio.
func BenchmarkReadConsult(b *testing.B) {
	bin := pinnedCLI(b, "claude")
	rt, err := ResolveRuntime(bin)
	if err != nil {
		b.Fatal(err)
	}
	const model = "claude-sonnet-4-5"
	r := newRunner(b)
	if q, err := r.Qualify(context.Background(), rt); err != nil || !q.Passed {
		b.Fatal(q, err)
	}
	env := config.FromList([]string{"CLAUDE_PATH=" + bin, "PATH=/usr/bin:/bin", "HOME=" + b.TempDir(),
		"ANTHROPIC_API_KEY=sk-ant-api03-host-synthetic", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"})
	host := claude.New(env, claude.Options{APIKeyBilling: true})
	turnIn := func(kernel bool) time.Duration {
		ws, err := filepath.EvalSymlinks(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(ws, "main.txt"), []byte("hello read world\n"), 0o644)
		file := filepath.Join(ws, "main.txt")
		if kernel {
			file = "/job/workspace/main.txt"
		}
		double := providertest.NewAnthropicTools(b, providertest.Options{Default: providertest.Reply{Text: "ANSWER"}},
			providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": file}})
		t := adapter.Turn{Prompt: "What does main.txt say?", Workspace: ws, Model: model}
		be := host
		if kernel {
			g := newGate(b, double.URL())
			t0 := time.Now()
			_, phantom := grant(b, g, model) // per turn, as the governor does
			l, err := r.ReadLauncher(ReadTurn{Runtime: rt, Phantom: phantom, PhantomVar: "ANTHROPIC_API_KEY", Gate: g})
			if err != nil {
				b.Fatal(err)
			}
			t.Launcher = l
			res, err := be.Run(context.Background(), t)
			d := time.Since(t0)
			if err != nil || res.Text != "ANSWER" {
				b.Fatalf("kernel turn: %v %q", err, res.Text)
			}
			return d
		}
		be = claude.New(env.With("ANTHROPIC_BASE_URL", double.URL()), claude.Options{APIKeyBilling: true})
		t0 := time.Now()
		res, err := be.Run(context.Background(), t)
		d := time.Since(t0)
		if err != nil || res.Text != "ANSWER" {
			b.Fatalf("host turn: %v %q", err, res.Text)
		}
		return d
	}
	var hostD, kernelD []time.Duration
	b.ResetTimer()
	for b.Loop() {
		hostD = append(hostD, turnIn(false))
		kernelD = append(kernelD, turnIn(true))
	}
	b.ReportMetric(medianMS(hostD), "host-ms")
	b.ReportMetric(medianMS(kernelD), "kernel-ms")
	b.ReportMetric(medianMS(kernelD)/medianMS(hostD), "kernel/host")
}

// medianMS is the median of ds in milliseconds.
func medianMS(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}
