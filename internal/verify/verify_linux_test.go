//go:build linux && amd64

package verify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/review"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// goRoot returns this host's Go toolchain (canonical, symlinks resolved), as
// `go env GOROOT` reports it.

func goRoot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		panic("go env GOROOT: " + err.Error())
	}
	root, err := filepath.EvalSymlinks(strings.TrimSpace(string(out)))
	if err != nil {
		panic("GOROOT: " + err.Error())
	}
	return root
}

// tinyModule writes a Go module with a passing package and a failing one.
// The failing test prints a synthetic credential and writes a file into
// its working directory (which must land in the copy, not here).
func tinyModule(t *testing.T, key string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":            "module example.com/tiny\n\ngo 1.22\n",
		"pass/pass.go":      "package pass\n\nfunc Add(a, b int) int { return a + b }\n",
		"pass/pass_test.go": "package pass\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"bad sum\")\n\t}\n}\n",
		"fail/fail.go":      "package fail\n\nfunc Div(a, b int) int { return a * b }\n",
		"fail/fail_test.go": "package fail\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestDiv(t *testing.T) {\n" +
			"\tos.WriteFile(\"WROTE_BY_TEST\", []byte(\"x\"), 0o644)\n" +
			"\tif Div(6, 3) != 2 {\n\t\tt.Fatalf(\"Div(6, 3) wrong; ANTHROPIC_API_KEY=" + key + "\")\n\t}\n}\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func newVerifier(t *testing.T, sink event.Sink) *Verifier {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{StateDir: t.TempDir(), AutoQualify: true, Events: sink})
	if err != nil {
		t.Fatal(err)
	}
	v, err := New(Config{Sandbox: sb, Home: "/home/nobody-here", GoModCache: GoModCache(config.FromOS())})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func resolved(t *testing.T, cmds ...[]string) config.Verify {
	t.Helper()
	set, err := config.Verify{Commands: cmds, Timeout: 3 * time.Minute}.Resolve(
		config.FromList([]string{"PATH=" + goRoot() + "/bin:/usr/bin:/bin"}))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestRunGoChecks runs the configured commands [["go","build","./..."],
// ["go","test","./..."]] on a real module in the real sandbox: the build
// passes, the test suite exits 1 with its real output (redacted) and a
// receipt, and the user's directory is untouched.
func TestRunGoChecks(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("Z", 40)
	ws := tinyModule(t, key)
	v := newVerifier(t, &event.Memory{})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	checks := v.Run(ctx, ws, resolved(t, []string{"go", "build", "./..."}, []string{"go", "test", "./..."}))
	if len(checks) != 2 {
		t.Fatalf("%d checks", len(checks))
	}
	type row struct {
		Command          []string
		Kind             Kind
		Status           Status
		Exit             string
		Code             int
		Reason           string
		TreeEmpty, HasID bool
		MemLimit         int64
	}
	var got []row
	for _, c := range checks {
		r := row{Command: c.Command, Kind: c.Kind, Status: c.Status, Exit: c.Exit, Code: c.ExitCode, Reason: c.Reason}
		if c.Receipt != nil {
			r.TreeEmpty, r.HasID, r.MemLimit = c.Receipt.TreeEmpty, c.Receipt.JobID != "" && c.Receipt.PolicyDigest != "", c.Receipt.Observed.MemoryLimitBytes
		}
		got = append(got, r)
	}
	goBin := goRoot() + "/bin/go"
	want := []row{
		{Command: []string{goBin, "build", "./..."}, Kind: KindTypecheck, Status: Passed, Exit: "exited", Code: 0, TreeEmpty: true, HasID: true, MemLimit: DefaultMemoryMiB << 20},
		{Command: []string{goBin, "test", "./..."}, Kind: KindTests, Status: Failed, Exit: "exited", Code: 1, TreeEmpty: true, HasID: true, MemLimit: DefaultMemoryMiB << 20},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("checks (-want +got):\n%s\ntest stdout:\n%s\nstderr:\n%s", d, checks[1].StdoutTail, checks[1].StderrTail)
	}
	out := checks[1].StdoutTail
	for _, s := range []string{"--- FAIL: TestDiv", "ok  \texample.com/tiny/pass", "FAIL\texample.com/tiny/fail"} {
		if !strings.Contains(out, s) {
			t.Errorf("test output lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out+checks[1].StderrTail, key) || !strings.Contains(out, "ANTHROPIC_API_KEY=") {
		t.Errorf("output tail is not redacted:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "fail", "WROTE_BY_TEST")); err == nil {
		t.Error("the check wrote into the user's checkout")
	}
	j := Judge(checks, review.Checks{Typecheck: "PASS", Tests: "PASS"})
	if d := cmp.Diff(Judgement{Failed: true, Warnings: []string{"the model claimed tests=PASS but `go test ./...` exited 1"}}, j); d != "" {
		t.Errorf("Judge (-want +got):\n%s", d)
	}
}

// TestUnwritableSinkIsNotRun: with an audit sink the kernel refuses to
// write (/dev/full), every check is refused by the sandbox and reported
// not run with the reason — never as a pass.
func TestUnwritableSinkIsNotRun(t *testing.T) {
	full, err := event.OpenFile("/dev/full", redact.NewDiagnostic(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { full.Close() })
	checks := newVerifier(t, full).Run(context.Background(), t.TempDir(), resolved(t, []string{"true"}))
	if len(checks) != 1 || checks[0].Status != NotRun || !strings.Contains(checks[0].Reason, sandbox.ReasonSinkUnwritable) {
		t.Fatalf("checks = %+v", checks)
	}
	j := Judge(checks, review.Checks{Tests: "PASS"})
	want := "configured check `true` was not run: " + checks[0].Reason
	if j.Failed || len(j.Warnings) != 1 || j.Warnings[0] != want {
		t.Errorf("Judge = %+v, want a not-run warning %q", j, want)
	}
}

// TestRefusedCommandIsNotRun: a configuration the sandbox cannot admit (a
// read-only path under /tmp) refuses the check with the reason.
func TestRefusedCommandIsNotRun(t *testing.T) {
	set := resolved(t, []string{"true"})
	set.ReadOnly = []string{t.TempDir()}
	checks := newVerifier(t, nil).Run(context.Background(), t.TempDir(), set)
	if checks[0].Status != NotRun || !strings.Contains(checks[0].Reason, "sandbox.root") || checks[0].Receipt != nil {
		t.Fatalf("checks = %+v", checks)
	}
}
