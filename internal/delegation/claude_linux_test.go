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

	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/sandbox"
	"github.com/coagent8/coagent8/internal/secret"
)

// TestClaudeCodeCandidateThroughGate: the pinned Claude Code runs inside
// the candidate profile against the Anthropic double, scripted to read and
// edit a file and run a shell command, through the gate with a phantom
// credential. The edit is in the candidate's upper layer, the command
// really ran, the user's workspace is byte-identical afterwards, the
// double saw only the real (synthetic) key, and the CLI's environment and
// argv held only the phantom (issue 15 scope 1, 2, 4; tests "Claude Code
// inside the candidate profile" and "the gate").
func TestClaudeCodeCandidateThroughGate(t *testing.T) {
	rt, err := ResolveRuntime(pinnedCLI(t, "claude"))
	if err != nil {
		t.Fatal(err)
	}
	const model = "claude-sonnet-4-5"
	file := "/job/workspace/main.txt"
	cmd := `tr '\0' '\n' < /proc/$PPID/cmdline > argv.txt; env > env.txt; echo ran-$((6*7)) > ran.txt`
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "CANDIDATE-DONE"}},
		providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": file}},
		providertest.ToolUse{Name: "Edit", Input: map[string]any{"file_path": file, "old_string": "old world", "new_string": "new world"}},
		providertest.ToolUse{Name: "Bash", Input: map[string]any{"command": cmd, "description": "record"}})
	g := newGate(t, double.URL())
	gr, phantom := grant(t, g, model)

	ws, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "main.txt"), []byte("hello old world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "other.txt"), []byte("untouched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, ws)
	var out, errb bytes.Buffer
	r := newRunner(t)
	q := qualify(t, r, rt)
	if q.Digest != rt.Digest || q.Version != ClaudeVersion+" (Claude Code)" || q.PolicyDigest == "" {
		t.Errorf("qualification %+v", q)
	}
	res, err := r.Run(testCtx(t), Job{Runtime: rt, Model: model, Prompt: "Edit main.txt, then record the run.",
		Workspace: ws, CandidateDir: dir, Phantom: phantom, Grant: gr.ID, Gate: g, Stdout: &out, Stderr: &errb})
	if err != nil {
		t.Fatalf("run: %v\nstdout %s\nstderr %s", err, out.String(), errb.String())
	}
	if !res.Receipt.Exit.Success() || !strings.Contains(out.String(), "CANDIDATE-DONE") {
		t.Fatalf("exit %+v\nstdout %s\nstderr %s", res.Receipt.Exit, out.String(), errb.String())
	}
	upper := filepath.Join(dir, "upper")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(upper, name))
		if err != nil {
			t.Errorf("candidate %s: %v", name, err)
		}
		return string(b)
	}
	if got := read("main.txt"); got != "hello new world\n" {
		t.Errorf("candidate main.txt = %q, want the edit", got)
	}
	if got := read("ran.txt"); got != "ran-42\n" {
		t.Errorf("ran.txt = %q: the shell command did not run", got)
	}
	if after := treeHash(t, ws); after != before {
		t.Errorf("the user's workspace changed (tree hash %s -> %s)", before, after)
	}
	env, argv := read("env.txt"), read("argv.txt")
	t.Logf("agent command env:\n%s\nclaude argv:\n%s", strings.ReplaceAll(env, phantom.Reveal(), "<phantom>"), argv)
	if !strings.Contains(env, "ANTHROPIC_API_KEY="+phantom.Reveal()) {
		t.Errorf("the CLI's environment lacks the phantom:\n%s", env)
	}
	for name, s := range map[string]string{"env": env, "argv": argv, "stdout": out.String(), "stderr": errb.String(),
		"receipt": string(res.Receipt.JSON())} {
		if strings.Contains(s, realKey()) {
			t.Errorf("the real key is in the CLI's %s", name)
		}
	}
	reqs := double.Requests()
	if len(reqs) < 4 {
		t.Errorf("the double saw %d requests, want the 3 tool turns and the answer", len(reqs))
	}
	for _, r := range reqs {
		if r.Credential() != realKey() {
			t.Errorf("%s %s: the double did not get the real key", r.Method, r.Path)
		}
		if bytes.Contains(r.Body, []byte(phantom.Reveal())) || strings.Contains(strings.Join(flatten(r.Header), ""), phantom.Reveal()) {
			t.Errorf("%s %s: the phantom reached the double", r.Method, r.Path)
		}
	}
	kinds := map[string]string{}
	for _, c := range res.Changes {
		kinds[c.Path] = c.Kind.String()
	}
	for p, k := range map[string]string{"main.txt": "modified", "ran.txt": "added"} {
		if kinds[p] != k {
			t.Errorf("change %s = %q, want %q (all: %v)", p, kinds[p], k, kinds)
		}
	}
	if res.Grant.ID != gr.ID || res.Grant.Used.Requests != int64(len(reqs)) || res.Grant.Used.Tokens == 0 || res.Grant.Reserved != (gate.Counters{}) {
		t.Errorf("grant after the job: %+v, want %d requests counted, tokens, nothing reserved", res.Grant, len(reqs))
	}
	t.Logf("receipt: profile %s, exit %s, run %.0f ms; report %+v", res.Receipt.Profile, res.Receipt.Exit.Class, res.Receipt.RunMS, res.Report)
}

func flatten(h map[string][]string) []string {
	var out []string
	for k, v := range h {
		out = append(out, k+":"+strings.Join(v, ","))
	}
	return out
}

// TestCancelRevokesGrant: cancelling a delegated job while the model's
// answer is streaming ends the whole tree (the job's cgroup verified
// empty) and revokes its grant, which cuts the stream at the gate, in
// one step (issue 15 scope 6, test "cancelling mid-stream leaves no
// process and a revoked grant").
func TestCancelRevokesGrant(t *testing.T) {
	rt, err := ResolveRuntime(pinnedCLI(t, "claude"))
	if err != nil {
		t.Fatal(err)
	}
	const model = "claude-sonnet-4-5"
	double := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: strings.Repeat("slow ", 400),
		Chunks: 400, ChunkDelay: 100 * time.Millisecond}})
	g := newGate(t, double.URL())
	gr, phantom := grant(t, g, model)
	r := newRunner(t)
	qualify(t, r, rt)
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() {
		for double.ActiveStreams() == 0 && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // mid-stream
		cancel()
	}()
	start := time.Now()
	res, err := r.Run(ctx, Job{Runtime: rt, Model: model, Prompt: "p", Workspace: t.TempDir(), CandidateDir: t.TempDir(),
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
	deadline := time.Now().Add(5 * time.Second)
	for double.ActiveStreams() != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := double.ActiveStreams(); n != 0 {
		t.Errorf("%d upstream streams still open after the cancel", n)
	}
	t.Logf("cancelled after %v", time.Since(start))
}

// TestContainmentEventTaints: the agent's own shell command presents the
// phantom on a route the gate does not admit (a scripted containment
// event); the gate revokes the job's grant, the model is not reached
// again, and the job's result is tainted (issue 15 scope 6, test "a
// scripted containment event taints the job").
func TestContainmentEventTaints(t *testing.T) {
	rt, err := ResolveRuntime(pinnedCLI(t, "claude"))
	if err != nil {
		t.Fatal(err)
	}
	const model = "claude-sonnet-4-5"
	cmd := `exec 3<>/dev/tcp/127.0.0.1/8080; printf 'POST /v1/complete HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: %s\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}' "$ANTHROPIC_API_KEY" >&3; head -1 <&3 > answer.txt`
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "SHOULD-NOT-ARRIVE"}},
		providertest.ToolUse{Name: "Bash", Input: map[string]any{"command": cmd, "description": "probe"}})
	g := newGate(t, double.URL())
	gr, phantom := grant(t, g, model)
	r := newRunner(t)
	qualify(t, r, rt)
	var out bytes.Buffer
	dir := t.TempDir()
	res, err := r.Run(testCtx(t), Job{Runtime: rt, Model: model, Prompt: "p", Workspace: t.TempDir(), CandidateDir: dir,
		Phantom: phantom, Grant: gr.ID, Gate: g, Stdout: &out})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !res.Tainted || res.Grant.State != gate.Revoked {
		t.Errorf("tainted %v (%q), grant %q: want a tainted job and a revoked grant\n%s", res.Tainted, res.TaintReason, res.Grant.State, out.String())
	}
	if strings.Contains(out.String(), "SHOULD-NOT-ARRIVE") || len(double.Requests()) != 1 {
		t.Errorf("the model was reached after the containment event (%d requests)", len(double.Requests()))
	}
	answer, _ := os.ReadFile(filepath.Join(dir, "upper", "answer.txt"))
	t.Logf("exit %+v; taint: %s; the gate answered the probe with %q", res.Receipt.Exit, res.TaintReason, answer)
}

// TestRequestBudgetHolds: a grant of 2 requests lets exactly 2 model
// requests through, although the CLI needs a third and the agent's own
// shell sends two more with the phantom; the double sees 2 and the
// grant's counters say 2 (issue 15 test "a budget of N requests lets
// exactly N through even when the agent retries").
func TestRequestBudgetHolds(t *testing.T) {
	rt, err := ResolveRuntime(pinnedCLI(t, "claude"))
	if err != nil {
		t.Fatal(err)
	}
	const model = "claude-sonnet-4-5"
	retry := `body='{"model":"claude-sonnet-4-5","max_tokens":16,"messages":[{"role":"user","content":"x"}]}'
for i in 1 2; do exec 3<>/dev/tcp/127.0.0.1/8080
printf 'POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: %s\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' "$ANTHROPIC_API_KEY" ${#body} "$body" >&3
head -1 <&3 >> retries.txt; exec 3>&-; done`
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "OVER-BUDGET-ANSWER"}},
		providertest.ToolUse{Name: "Bash", Input: map[string]any{"command": "echo a > a.txt", "description": "a"}},
		providertest.ToolUse{Name: "Bash", Input: map[string]any{"command": "echo b > b.txt; " + retry, "description": "b"}})
	g := newGate(t, double.URL())
	ref, _ := secret.ParseRef("env:REAL_KEY")
	gr, phantom, err := g.Grant(context.Background(), gate.Spec{Provider: gate.Anthropic, Model: model, Job: "job-budget",
		TTL: time.Hour, Secret: ref, MaxRequests: 2, MaxTokens: 10_000_000, MaxSpend: gate.USD(100),
		Price: &gate.Price{InputPerMTok: 3, OutputPerMTok: 15, CacheWritePerMTok: 3.75, CacheReadPerMTok: 0.3}})
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t)
	qualify(t, r, rt)
	dir := t.TempDir()
	var out bytes.Buffer
	res, err := r.Run(testCtx(t), Job{Runtime: rt, Model: model, Prompt: "p", Workspace: t.TempDir(), CandidateDir: dir,
		Phantom: phantom, Grant: gr.ID, Gate: g, Stdout: &out})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	retries, _ := os.ReadFile(filepath.Join(dir, "upper", "retries.txt"))
	if n := len(double.Requests()); n != 2 || res.Grant.Used.Requests != 2 || strings.Contains(out.String(), "OVER-BUDGET-ANSWER") {
		t.Errorf("double saw %d requests, grant used %+v; want exactly 2\n%s", n, res.Grant.Used, out.String())
	}
	if got := strings.Count(string(retries), "402"); got != 2 {
		t.Errorf("the agent's own retries got %q, want two 402 refusals", retries)
	}
	t.Logf("exit %+v; agent retries answered %q", res.Receipt.Exit, retries)
}
