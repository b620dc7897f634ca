//go:build linux && amd64

package delegation

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// TestCodexCandidateThroughGate: the pinned Codex (its static vendor
// binary, not the node launcher) runs inside the candidate profile
// against the OpenAI double through the gate with a phantom credential;
// scripted exec_command calls edit a file and run a command, and they
// really run (Codex's own sandbox is off: it cannot nest here), the edit
// lands in the candidate's upper layer and the workspace is unchanged.
func TestCodexCandidateThroughGate(t *testing.T) {
	rt, err := ResolveRuntime(codexBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	const model = "gpt-5.1"
	double := providertest.NewOpenAITools(t, providertest.Options{Default: providertest.Reply{Text: "CODEX-DONE"}},
		providertest.FunctionCall{Name: "exec_command", Arguments: map[string]any{"cmd": "sed -i s/old/new/ main.txt", "workdir": "/job/workspace"}},
		providertest.FunctionCall{Name: "exec_command", Arguments: map[string]any{"cmd": `env > env.txt; echo ran-$((6*7)) > ran.txt`, "workdir": "/job/workspace"}})
	g := newGateFor(t, gate.OpenAI, double.URL())
	_, phantom := grantFor(t, g, gate.OpenAI, model)
	ws, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "main.txt"), []byte("hello old world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, ws)
	r := newRunner(t)
	var out, errb bytes.Buffer
	spec := codexSpec(Job{Runtime: rt, Model: model, Prompt: "Edit main.txt, then record the run.", Workspace: ws,
		CandidateDir: dir, Phantom: phantom}, sandbox.DefaultGatePort)
	spec.Stdout, spec.Stderr = &out, &errb
	spec.Gate = func(ln net.Listener) { _ = http.Serve(ln, g) }
	rec, err := r.sb.RunAgent(testCtx(t), spec)
	if err != nil || !rec.Exit.Success() {
		t.Fatalf("run: %v exit %+v\nstdout %s\nstderr %s", err, rec.Exit, out.String(), errb.String())
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
	if !strings.Contains(out.String(), "CODEX-DONE") {
		t.Errorf("final answer missing:\n%s", out.String())
	}
	for _, q := range double.Requests() {
		if q.Credential() != realKeyFor(gate.OpenAI) || bytes.Contains(q.Body, []byte(phantom.Reveal())) {
			t.Errorf("%s %s: the double must see the real key and never the phantom", q.Method, q.Path)
		}
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
