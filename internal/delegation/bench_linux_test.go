//go:build linux && amd64

package delegation

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/providertest"
)

// BenchmarkClaudeJob times a short scripted delegated job (one tool
// round trip that writes a file, one that runs a shell command, the
// answer) for the pinned Claude Code (issue 15 Performance, second
// bullet): "candidate" runs it in the candidate profile through the gate
// (Runner.Run: qualification check, sandbox setup, overlay, gate,
// changes read back); "direct" runs the same CLI unsandboxed against the
// double, in a plain temporary copy of the workspace.
func BenchmarkClaudeJob(b *testing.B) {
	bin := pinnedCLI(b, "claude")
	rt, err := ResolveRuntime(bin)
	if err != nil {
		b.Fatal(err)
	}
	const model = "claude-sonnet-4-5"
	tools := func(dir string) []providertest.ToolUse {
		f := filepath.Join(dir, "new.txt")
		return []providertest.ToolUse{
			{Name: "Write", Input: map[string]any{"file_path": f, "content": "hello new world\n"}},
			{Name: "Bash", Input: map[string]any{"command": "echo ran > ran.txt", "description": "record"}}}
	}
	r := newRunner(b)
	if q, err := r.Qualify(context.Background(), rt); err != nil || !q.Passed {
		b.Fatal(q, err)
	}
	candidate := func() time.Duration {
		double := providertest.NewAnthropicTools(b, providertest.Options{Default: providertest.Reply{Text: "DONE"}},
			tools("/job/workspace")...)
		g := newGate(b, double.URL())
		gr, phantom := grant(b, g, model)
		ws, dir := b.TempDir(), b.TempDir()
		if err := os.WriteFile(filepath.Join(ws, "main.txt"), []byte("hello old world\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		res, err := r.Run(context.Background(), Job{Runtime: rt, Model: model, Prompt: "edit", Workspace: ws,
			CandidateDir: dir, Phantom: phantom, Grant: gr.ID, Gate: g})
		d := time.Since(t0)
		if err != nil || !res.Receipt.Exit.Success() || len(res.Changes) != 2 {
			b.Fatalf("run: %v %+v %v", err, res.Receipt.Exit, res.Changes)
		}
		return d
	}
	direct := func() time.Duration {
		ws, home := b.TempDir(), b.TempDir()
		double := providertest.NewAnthropicTools(b, providertest.Options{Default: providertest.Reply{Text: "DONE"}}, tools(ws)...)
		if err := os.WriteFile(filepath.Join(ws, "main.txt"), []byte("hello old world\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, claudeArgs(model, "edit")...)
		cmd.Dir = ws
		cmd.Env = []string{"HOME=" + home, "PATH=" + config.FromOS().Get("PATH"), "SHELL=/bin/bash",
			"ANTHROPIC_BASE_URL=" + double.URL(), "ANTHROPIC_API_KEY=sk-ant-api03-direct-synthetic",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1"}
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(t0)
		if _, serr := os.Stat(filepath.Join(ws, "ran.txt")); err != nil || serr != nil {
			b.Fatalf("direct run: %v %v\n%s", err, serr, out)
		}
		return d
	}
	// Pairs in one loop, so load drift on a shared machine hits both.
	var cand, host []time.Duration
	b.ResetTimer()
	for b.Loop() {
		host = append(host, direct())
		cand = append(cand, candidate())
	}
	hc, cc := medianMS(host), medianMS(cand)
	b.ReportMetric(hc, "direct-ms")
	b.ReportMetric(cc, "candidate-ms")
	b.ReportMetric(cc-hc, "added-ms")
	b.ReportMetric(cc/hc, "candidate/direct")
}
