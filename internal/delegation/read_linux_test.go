//go:build linux && amd64

package delegation

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/adapter/claude"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/process"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/secret"
)

// TestClaudeReadProfileThroughGate (issue 15 scope 8): the claude
// backend's own read-only turn — its argv, its startup-report check — run
// by the read launcher: the pinned Claude Code reads a workspace file
// through its Read tool inside the read profile, with the gate as its
// only network and a phantom credential; the answer is the double's, the
// report verified as on the host, the containment kernel, the double saw
// only the real (synthetic) key, and the workspace is byte-identical.
func TestClaudeReadProfileThroughGate(t *testing.T) {
	rt, err := ResolveRuntime(pinnedCLI(t, "claude"))
	if err != nil {
		t.Fatal(err)
	}
	const model = "claude-sonnet-4-5"
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "READ-PROFILE-ANSWER"}},
		providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": "/job/workspace/main.txt"}})
	g := newGate(t, double.URL())
	gr, phantom := grant(t, g, model)
	ws := canonicalTemp(t)
	if err := os.WriteFile(filepath.Join(ws, "main.txt"), []byte("hello read world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, ws)
	r := newRunner(t)
	qualify(t, r, rt)
	l, err := r.ReadLauncher(ReadTurn{Runtime: rt, Phantom: phantom, PhantomVar: "ANTHROPIC_API_KEY", Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	b := claude.New(config.FromList([]string{"CLAUDE_PATH=" + pinnedCLI(t, "claude"), "PATH=/usr/bin:/bin"}), claude.Options{})
	res, err := b.Run(testCtx(t), adapter.Turn{Prompt: "What does main.txt say?", Workspace: ws, Model: model, Launcher: l})
	if err != nil {
		t.Fatalf("read-profile turn: %v", err)
	}
	if res.Text != "READ-PROFILE-ANSWER" || res.Containment != adapter.ContainmentKernel ||
		!strings.Contains(res.Verified, "tools=[Glob,Grep,Read]") || !strings.Contains(res.Verified, "containment=kernel") {
		t.Errorf("result = %+v", res)
	}
	reqs := double.Requests()
	if len(reqs) < 2 {
		t.Fatalf("double saw %d requests, want the tool round and the answer", len(reqs))
	}
	for _, q := range reqs {
		if q.Credential() != realKey() {
			t.Errorf("%s %s: the double did not see the real key", q.Method, q.Path)
		}
		if strings.Contains(string(q.Body), phantom.Reveal()) || strings.Contains(q.Credential(), phantom.Reveal()) {
			t.Errorf("%s %s: the phantom reached the provider", q.Method, q.Path)
		}
	}
	if !strings.Contains(string(reqs[len(reqs)-1].Body), "hello read world") {
		t.Error("the tool result (the file read in the read profile) did not reach the model")
	}
	if got, err := g.Inspect(context.Background(), gr.ID); err != nil || got.Used.Requests != int64(len(reqs)) {
		t.Errorf("grant counters %+v (%v), want %d requests", got.Used, err, len(reqs))
	}
	if after := treeHash(t, ws); after != before {
		t.Error("the workspace changed during the read-profile turn")
	}
}

// probeScript stands in for the CLI to probe the read profile's boundary
// from inside: it qualifies like the pinned CLI (--version), reads the
// prompt from stdin, then tries to write the workspace, reach another
// loopback listener and the gate, and read a host file.
const probeScript = `#!/bin/bash
if [ "$1" = --version ]; then echo "2.1.328 (Claude Code)"; exit 0; fi
IFS= read -r prompt; echo "stdin=$prompt"
echo "args=$*"
if echo x 2>/dev/null > /job/workspace/pwn; then echo write=ok; else echo write=denied; fi
if (exec 3<>/dev/tcp/127.0.0.1/$2) 2>/dev/null; then echo other=ok; else echo other=denied; fi
if (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null; then echo gate=ok; else echo gate=denied; fi
if cat "$3" >/dev/null 2>&1; then echo hostfile=ok; else echo hostfile=denied; fi
echo "key=$ANTHROPIC_API_KEY"
env | grep -q sk-ant && echo realkey=present
exit 0
`

// TestReadProfileBoundary: what runs in the read profile gets the prompt
// on stdin and the argv unchanged, cannot write the workspace, cannot
// reach a loopback listener other than the gate (which sees nothing),
// cannot read a host file outside the workspace, and holds only the
// phantom credential.
func TestReadProfileBoundary(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "coagent8-read-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	exe := filepath.Join(dir, "probe")
	if err := os.WriteFile(exe, []byte(probeScript), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	rt, err := ResolveRuntime(exe)
	if err != nil {
		t.Fatal(err)
	}
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var otherSeen atomic.Int64
	go func() {
		for {
			c, err := other.Accept()
			if err != nil {
				return
			}
			otherSeen.Add(1)
			c.Close()
		}
	}()
	hostFile := filepath.Join(dir, "host-secret")
	if err := os.WriteFile(hostFile, []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	double := providertest.NewAnthropic(t, providertest.Options{})
	g := newGate(t, double.URL())
	_, phantom := grant(t, g, "claude-sonnet-4-5")
	ws := canonicalTemp(t)
	os.WriteFile(filepath.Join(ws, "main.txt"), []byte("x\n"), 0o644)
	before := treeHash(t, ws)
	r := newRunner(t)
	qualify(t, r, rt)
	l, err := r.ReadLauncher(ReadTurn{Runtime: rt, Phantom: phantom, PhantomVar: "ANTHROPIC_API_KEY", Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(other.Addr().(*net.TCPAddr).Port)
	p, err := l.Launch(testCtx(t), process.Spec{Path: exe, Args: []string{"probe", port, hostFile}, Dir: ws,
		Stdin: []byte("the prompt\n"), Env: []string{"ANTHROPIC_API_KEY=" + realKey()}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	sc := bufio.NewScanner(p.Stdout())
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		got[k] = v
	}
	if code, why := p.Wait(); code != 0 || why != process.EndNone {
		t.Fatalf("probe exit %d (%v), %s; output %v", code, why, p.Ended(), got)
	}
	want := map[string]string{"stdin": "the prompt", "args": "probe " + port + " " + hostFile, "write": "denied",
		"other": "denied", "gate": "ok", "hostfile": "denied", "key": phantom.Reveal()}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["realkey"]; ok {
		t.Error("the real key reached the sandbox's environment")
	}
	if otherSeen.Load() != 0 || len(double.Requests()) != 0 {
		t.Errorf("reached from the sandbox: other listener %d connections, double %d requests", otherSeen.Load(), len(double.Requests()))
	}
	if after := treeHash(t, ws); after != before {
		t.Error("the workspace changed")
	}
}

// TestReadLauncherRefusesAnotherExecutable: the launcher runs only the
// qualified runtime; any other path refuses before anything starts.
func TestReadLauncherRefusesAnotherExecutable(t *testing.T) {
	r := newRunner(t)
	l, err := r.ReadLauncher(ReadTurn{Runtime: Runtime{Executable: "/usr/bin/true", Digest: "sha256:00"}, Phantom: mustPhantom(),
		PhantomVar: "ANTHROPIC_API_KEY", Gate: newGate(t, "http://127.0.0.1:9")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Launch(testCtx(t), process.Spec{Path: "/bin/sh", Dir: t.TempDir()})
	if got := reasonOf(err); got != "delegation.read_runtime" {
		t.Errorf("reason = %q (%v), want delegation.read_runtime", got, err)
	}
	_, err = l.Launch(testCtx(t), process.Spec{Path: "/usr/bin/true", Dir: t.TempDir()})
	if got := reasonOf(err); got != "delegation.runtime_unqualified" {
		t.Errorf("reason = %q (%v), want delegation.runtime_unqualified", got, err)
	}
	if got := reasonOf(r.Qualified(Runtime{Executable: "/usr/bin/true", Digest: "sha256:00"})); got != "delegation.runtime_unqualified" {
		t.Errorf("Qualified reason = %q, want delegation.runtime_unqualified", got)
	}
}

func canonicalTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func reasonOf(err error) string {
	if err == nil {
		return ""
	}
	return fault.From(err).Reason
}

func mustPhantom() secret.Value { return secret.New("c8g_" + strings.Repeat("p", 43)) }
