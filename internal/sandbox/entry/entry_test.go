package entry

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
	bin := filepath.Join(t.TempDir(), "coagent8")
	build := exec.Command("go", "build", "-o", bin, "./cmd/coagent8")
	build.Dir = clitest.Root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cli := initTrace(t, bin, []string{bin, "--version"}, 0)
	probe := initTrace(t, bin, []string{bin, "__coagent8_sandbox_probe__", "no-such-probe"}, 2)
	for _, p := range heavy {
		if !cli[p] {
			t.Errorf("control: the command line did not initialise %s", p)
		}
		if probe[p] {
			t.Errorf("the probe mode initialised %s", p)
		}
	}
}

// initTrace runs bin with argv and GODEBUG=inittrace=1, checks the exit
// code and returns the set of packages whose initialisers ran.
func initTrace(t *testing.T, bin string, argv []string, wantCode int) map[string]bool {
	t.Helper()
	var stderr bytes.Buffer
	cmd := &exec.Cmd{Path: bin, Args: argv, Env: []string{"GODEBUG=inittrace=1"}, Stderr: &stderr}
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
	for _, line := range strings.Split(stderr.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			ran[f[1]] = true
		}
	}
	return ran
}
