package entry

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/clitest"
)

// heavy are packages the command line initialises and a containment probe
// never needs (MCP server, JSON Schema, SQLite).
var heavy = []string{
	"github.com/modelcontextprotocol/go-sdk/mcp",
	"github.com/google/jsonschema-go/jsonschema",
	"modernc.org/libc",
}

// TestProbeSkipsUnneededInit builds cmd/coagent8 and starts it in probe
// mode (with an unknown probe name, so it refuses at once): the heavy
// packages must not have been initialised, while the same binary's command
// line does initialise them (the control that keeps the test honest).
func TestProbeSkipsUnneededInit(t *testing.T) {
	bin := buildBinary(t)
	cli, _ := initTrace(t, bin, []string{bin, "--version"}, 0)
	probe, _ := initTrace(t, bin, []string{bin, "__coagent8_sandbox_probe__", "no-such-probe"}, 2)
	for _, p := range heavy {
		if !cli[p] {
			t.Errorf("control: the command line did not initialise %s", p)
		}
		if probe[p] {
			t.Errorf("the probe mode initialised %s", p)
		}
	}
}

// TestSandboxRunFastPath: a well-formed `sandbox run` runs from the
// initialiser (no heavy package initialised) with the command's status;
// a malformed one falls through to the full command line, which reports
// it as a usage error.
func TestSandboxRunFastPath(t *testing.T) {
	bin := buildBinary(t)
	env := []string{"COAGENT8_DIR=" + t.TempDir(), "HOME=" + t.TempDir()}
	fast, _ := initTrace(t, bin, []string{bin, "sandbox", "run", "--quiet", "--", "/usr/bin/false"}, 1, env...)
	full, stderr := initTrace(t, bin, []string{bin, "sandbox", "run", "--bogus", "--", "/usr/bin/false"}, 2, env...)
	for _, p := range heavy {
		if fast[p] {
			t.Errorf("the sandbox run fast path initialised %s", p)
		}
		if !full[p] {
			t.Errorf("a malformed sandbox run did not reach the full command line (%s not initialised)", p)
		}
	}
	if !strings.Contains(stderr, "unknown flag: --bogus") {
		t.Errorf("fallback stderr %q; want cobra's unknown-flag message", stderr)
	}
}

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "coagent8")
	build := exec.Command("go", "build", "-o", bin, "./cmd/coagent8")
	build.Dir = clitest.Root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// initTrace runs bin with argv, env and GODEBUG=inittrace=1, checks the
// exit code and returns the set of packages whose initialisers ran and
// stderr without the trace.
func initTrace(t *testing.T, bin string, argv []string, wantCode int, env ...string) (map[string]bool, string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := &exec.Cmd{Path: bin, Args: argv, Env: append(env, "GODEBUG=inittrace=1"), Stderr: &stderr}
	code := 0
	var ee *exec.ExitError
	if err := cmd.Run(); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	if code != wantCode {
		t.Fatalf("%v: exit %d, want %d\n%s", argv, code, wantCode, stderr.String())
	}
	ran := map[string]bool{}
	var rest strings.Builder
	for _, line := range strings.Split(stderr.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			ran[f[1]] = true
		} else if line != "" {
			rest.WriteString(line + "\n")
		}
	}
	return ran, rest.String()
}

// TestSandboxRunTerminatedExits143: SIGTERM to a running `sandbox run`
// kills the sandboxed tree and exits 128+15, as a shell reports a command
// ended by SIGTERM.
func TestSandboxRunTerminatedExits143(t *testing.T) {
	bin := buildBinary(t)
	var stderr bytes.Buffer
	state := t.TempDir()
	cmd := &exec.Cmd{Path: bin, Args: []string{bin, "sandbox", "run", "--quiet", "--", "/usr/bin/sleep", "30"},
		Env: []string{"COAGENT8_DIR=" + state, "HOME=" + t.TempDir()}, Stderr: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Let it qualify (the record appears) and start the command, then
	// terminate it.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m, _ := filepath.Glob(filepath.Join(state, "sandbox", "qualification-*.json")); len(m) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 || !strings.Contains(stderr.String(), "sandboxed command was cancelled") {
		t.Errorf("exit %v, stderr %q; want 143 and the cancellation message", err, stderr.String())
	}
}
