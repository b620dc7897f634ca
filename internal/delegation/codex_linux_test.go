//go:build linux && amd64

package delegation

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// TestCodexCandidateThroughGate: the pinned Codex (its static vendor
// binary, resolved from the npm launcher, not run through node) runs as
// `codex app-server` behind Runner.Run inside the candidate profile
// against the OpenAI double through the gate with a phantom credential.
// Its thread report is verified (dangerFullAccess, never, the grant's
// model, the gate provider, no MCP server) before the turn; scripted
// exec_command calls edit a file and run a command, and they really run
// (Codex's own sandbox is off: it cannot nest here): the edit and the
// command's output file are in the candidate's upper layer, the
// workspace is byte-identical, the double sees the real key and never the
// phantom, and the final message comes back.
func TestCodexCandidateThroughGate(t *testing.T) {
	rt, err := ResolveCodexRuntime(pinnedCLI(t, "codex"))
	if err != nil {
		t.Fatal(err)
	}
	if rt.Executable != codexBinary(t) || rt.Provider() != gate.OpenAI {
		t.Fatalf("runtime %+v: want the vendor binary %s and provider openai", rt, codexBinary(t))
	}
	const model = "gpt-5.1"
	double := providertest.NewOpenAITools(t, providertest.Options{Default: providertest.Reply{Text: "CODEX-DONE"}},
		providertest.FunctionCall{Name: "exec_command", Arguments: map[string]any{"cmd": "sed -i s/old/new/ main.txt", "workdir": "/job/workspace"}},
		providertest.FunctionCall{Name: "exec_command", Arguments: map[string]any{"cmd": `env > env.txt; echo ran-$((6*7)) > ran.txt`, "workdir": "/job/workspace"}})
	g := newGateFor(t, gate.OpenAI, double.URL())
	gr, phantom := grantFor(t, g, gate.OpenAI, model)
	ws, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "main.txt"), []byte("hello old world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, ws)
	r := newRunner(t)
	q := qualify(t, r, rt)
	if q.Version != "codex-cli "+CodexVersion || q.Digest != rt.Digest {
		t.Errorf("qualification %+v", q)
	}
	var out, errb bytes.Buffer
	res, err := r.Run(testCtx(t), Job{Runtime: rt, Model: model, Prompt: "Edit main.txt, then record the run.", Workspace: ws,
		CandidateDir: dir, Phantom: phantom, Grant: gr.ID, Gate: g, Stdout: &out, Stderr: &errb})
	if err != nil || !res.Receipt.Exit.Success() {
		t.Fatalf("run: %v exit %+v\nstdout %s\nstderr %s", err, res.Receipt.Exit, out.String(), errb.String())
	}
	want := CodexReport{Version: CodexVersion, Sandbox: "dangerFullAccess", ApprovalPolicy: `"never"`, Model: model,
		ModelProvider: "gate", CWD: "/job/workspace", MCPServers: map[string]string{}}
	if res.Codex == nil {
		t.Fatal("no Codex report")
	}
	if d := cmp.Diff(want, *res.Codex); d != "" {
		t.Errorf("report (-want +got):\n%s", d)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, "upper", name))
		if err != nil {
			t.Errorf("candidate %s: %v\nstdout %s\nstderr %s", name, err, out.String(), errb.String())
		}
		return string(b)
	}
	if got := read("main.txt"); got != "hello new world\n" {
		t.Errorf("candidate main.txt = %q, want the edit", got)
	}
	if got := read("ran.txt"); got != "ran-42\n" {
		t.Errorf("ran.txt = %q: the command did not run", got)
	}
	if env := read("env.txt"); !strings.Contains(env, "OPENAI_API_KEY="+phantom.Reveal()) || strings.Contains(env, realKeyFor(gate.OpenAI)) {
		t.Errorf("the command's environment should hold the phantom and never the real key")
	}
	if after := treeHash(t, ws); after != before {
		t.Errorf("the user's workspace changed")
	}
	if res.Final != "CODEX-DONE" {
		t.Errorf("final message %q, want CODEX-DONE", res.Final)
	}
	kinds := map[string]string{}
	for _, c := range res.Changes {
		kinds[c.Path] = c.Kind.String()
	}
	for p, k := range map[string]string{"main.txt": "modified", "ran.txt": "added", "env.txt": "added"} {
		if kinds[p] != k {
			t.Errorf("change %s = %q, want %q (all: %v)", p, kinds[p], k, kinds)
		}
	}
	reqs := double.Requests()
	if len(reqs) < 3 {
		t.Errorf("the double saw %d requests, want the 2 tool turns and the answer", len(reqs))
	}
	for _, q := range reqs {
		if q.Credential() != realKeyFor(gate.OpenAI) || bytes.Contains(q.Body, []byte(phantom.Reveal())) ||
			strings.Contains(strings.Join(flatten(q.Header), ""), phantom.Reveal()) {
			t.Errorf("%s %s: the double must see the real key and never the phantom", q.Method, q.Path)
		}
	}
	for name, s := range map[string]string{"stdout": out.String(), "stderr": errb.String(), "receipt": string(res.Receipt.JSON())} {
		if strings.Contains(s, realKeyFor(gate.OpenAI)) {
			t.Errorf("the real key is in the CLI's %s", name)
		}
	}
	if res.Grant.Used.Requests != int64(len(reqs)) || res.Tainted {
		t.Errorf("grant after the job %+v tainted %v, want %d requests counted, untainted", res.Grant, res.Tainted, len(reqs))
	}
}

// codexBinary is the pinned Codex's static vendor binary.
func codexBinary(t *testing.T) string {
	t.Helper()
	launcher, err := filepath.EvalSymlinks(pinnedCLI(t, "codex"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(filepath.Dir(launcher), "..", "..", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl", "bin", "codex")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("pinned Codex vendor binary missing: %v", err)
	}
	return filepath.Clean(p)
}

// TestCodexCancelEndsTree: cancelling a Codex job while its agent's
// command runs (a scripted `sleep` that has visibly started in the
// candidate) ends the whole tree (the job's cgroup verified empty),
// revokes the grant and returns without waiting for the command or for
// the app-server's turn.
func TestCodexCancelEndsTree(t *testing.T) {
	rt, err := ResolveCodexRuntime(pinnedCLI(t, "codex"))
	if err != nil {
		t.Fatal(err)
	}
	const model = "gpt-5.1"
	double := providertest.NewOpenAITools(t, providertest.Options{Default: providertest.Reply{Text: "late"}},
		providertest.FunctionCall{Name: "exec_command", Arguments: map[string]any{"cmd": "touch started; sleep 600", "workdir": "/job/workspace",
			"yield_time_ms": 600000}})
	g := newGateFor(t, gate.OpenAI, double.URL())
	gr, phantom := grantFor(t, g, gate.OpenAI, model)
	r := newRunner(t)
	qualify(t, r, rt)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(dir, "upper", "started")); err == nil {
				cancel()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	start := time.Now()
	res, err := r.Run(ctx, Job{Runtime: rt, Model: model, Prompt: "p", Workspace: t.TempDir(), CandidateDir: dir,
		Phantom: phantom, Grant: gr.ID, Gate: g})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Receipt.Exit.Class != sandbox.ExitCancelled || !res.Receipt.TreeEmpty {
		t.Errorf("exit %+v tree_empty %v, want cancelled with the tree verified gone", res.Receipt.Exit, res.Receipt.TreeEmpty)
	}
	if got, err := g.Inspect(context.Background(), gr.ID); err != nil || got.State != gate.Revoked {
		t.Errorf("grant state %q (%v), want revoked", got.State, err)
	}
	if res.Tainted {
		t.Errorf("a cancelled job is not tainted: %s", res.TaintReason)
	}
	t.Logf("cancelled after %v", time.Since(start))
}
