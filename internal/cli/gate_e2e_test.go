package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/providertest"
)

// gateHelperVar makes the test binary act as `coagent8` (re-exec): the
// arguments after "--" are the command line.
const gateHelperVar = "COAGENT8_TEST_AS_CLI"

// TestGateHelperProcess is not a test: it is the `coagent8` process of
// the end-to-end tests below, started by startGateProcess.
func TestGateHelperProcess(t *testing.T) {
	env := config.FromOS()
	if env.Get(gateHelperVar) != "1" {
		return
	}
	i := slices.Index(os.Args, "--")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // the parent closes stdin to stop the server
		b := make([]byte, 1)
		os.Stdin.Read(b)
		cancel()
	}()
	os.Exit(MainEnv(ctx, os.Args[i+1:], Stdio{In: strings.NewReader(""), Out: os.Stdout, Err: os.Stderr}, env))
}

// startGateProcess runs `coagent8 gate serve args...` as a subprocess
// with exactly env and returns its URL.
func startGateProcess(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestGateHelperProcess$", "--", "gate", "serve",
		"--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(env, gateHelperVar+"=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var errb syncBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // close stdin → the server stops → wait; kill only if it hangs
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	var m map[string]string
	if err := json.NewDecoder(stdout).Decode(&m); err != nil || m["listening"] == "" {
		t.Fatalf("gate serve did not start (%v): %s", err, errb.String())
	}
	return m["listening"]
}

// runClaude runs the pinned Claude Code CLI in ws against the gate with
// only the phantom credential, asking it to read file; it returns the
// output (a refused turn exits non-zero: the double's requests decide).
func runClaude(t *testing.T, ws, base, phantom, file string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, clitest.Path(t, "claude"), "-p", "--output-format", "stream-json", "--verbose",
		"--model", gateModel, "--allowedTools", "Read", "--max-turns", "3")
	cmd.Dir = ws
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + config.FromOS().Get("PATH"), "ANTHROPIC_BASE_URL=" + base,
		"ANTHROPIC_API_KEY=" + phantom, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=0"}
	cmd.Stdin = strings.NewReader("Read " + file + " and repeat it verbatim.")
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// TestGateServeClaudeCodeEndToEnd: the real Claude Code CLI runs a turn
// through a `coagent8 gate serve` process; the provider double makes it
// Read a workspace file and send it back. With the built-in policy a
// file holding a credential never reaches the double (refused, event
// recorded); with a config.json label on the file and --workspace, the
// double gets only the filtered text.
func TestGateServeClaudeCodeEndToEnd(t *testing.T) {
	const privateWord = "Nightingale"
	tests := []struct {
		name, config, rel, content, reason string
		workspaceFlag                      bool
	}{
		{"built-in policy refuses a credential", "", "notes/deploy.txt",
			"deploy token: " + syntheticCredential() + "\n", egress.ReasonCategory, false},
		{"labelled file is filtered", labelledPolicy, "private/deal.md",
			"Project " + privateWord + " acquisition notes: target valuation 41.7M, board vote on the 14th.\n", egress.ReasonFiltered, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, state := gateEnv(t, tt.config)
			ws := t.TempDir()
			file := filepath.Join(ws, tt.rel)
			os.MkdirAll(filepath.Dir(file), 0o755)
			if err := os.WriteFile(file, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			anth := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "DONE-REPEATING"}},
				providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": file}})
			phantom := grantPhantom(t, env)
			args := []string{"--unsafe-loopback-upstream", "anthropic=" + anth.URL()}
			if tt.workspaceFlag {
				args = append(args, "--workspace", ws)
			}
			url := startGateProcess(t, []string{"COAGENT8_DIR=" + state, "HOME=" + t.TempDir(),
				"REAL_ANTHROPIC=" + gateRealKey()}, args...)
			out := runClaude(t, ws, url, phantom, tt.rel)
			checkEndToEnd(t, anth.Requests(), tt.reason, privateWord, out)
			if tt.reason == egress.ReasonCategory && !refusedWith(eventsOf(t, state), egress.ReasonCategory) {
				t.Errorf("no %s refusal event recorded; CLI output:\n%s", egress.ReasonCategory, out)
			}
		})
	}
}

// checkEndToEnd asserts what the double saw: the first (tool-less)
// request, and then either nothing carrying the file (refused) or only
// the placeholder (filtered); never the credential or the private word.
func checkEndToEnd(t *testing.T, reqs []providertest.Request, reason, privateWord, out string) {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatalf("the double received nothing: the first request should pass; CLI output:\n%s", out)
	}
	var results []string
	for _, r := range reqs {
		b := string(r.Body)
		if strings.Contains(b, "AAAAAAAAAA") || strings.Contains(b, privateWord) {
			t.Fatalf("protected content reached the provider double:\n%s", b)
		}
		if r.Credential() != gateRealKey() {
			t.Errorf("double did not get the real key")
		}
		if strings.Contains(b, "tool_result") {
			results = append(results, b)
		}
	}
	switch reason {
	case egress.ReasonCategory:
		if len(results) != 0 {
			t.Fatalf("a tool result reached the double: %s", results[0])
		}
	case egress.ReasonFiltered:
		if len(results) == 0 || !strings.Contains(results[0], "[WITHHELD:confidential]") {
			t.Fatalf("no filtered tool result reached the double; CLI output:\n%s", out)
		}
	}
}
