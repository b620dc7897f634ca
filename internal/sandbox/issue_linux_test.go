//go:build linux && amd64

package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestWritesOutsideWorkspaceFail: the workspace copy is writable, the
// user's input directory and every other path are not.
func TestWritesOutsideWorkspaceFail(t *testing.T) {
	s := newTestSandbox(t)
	in, err := os.MkdirTemp("/var/tmp", "coagent8-input-") // /tmp is synthesized inside
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(in) })
	if err := os.WriteFile(filepath.Join(in, "f"), []byte("orig"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	script := `echo new > f && cat f; for p in /etc/x /usr/x /x /job/x ` + in + `/f; do (echo x > $p) 2>/dev/null && echo "WROTE $p"; done; true`
	r := runUnqualified(t, s, testCtx(t), Spec{Path: "/usr/bin/dash", Args: []string{"-c", script}, Input: in,
		ReadOnly: []string{in}, Stdout: &out, Stderr: &out})
	if got, want := out.String(), "new\n"; got != want || !r.Exit.Success() {
		t.Errorf("output %q (exit %v), want %q", got, r.Exit, want)
	}
	if b, _ := os.ReadFile(filepath.Join(in, "f")); string(b) != "orig" {
		t.Errorf("user's input changed: %q", b)
	}
}

// TestForkBombStoppedHostResponsive: the pids limit stops a shell fork bomb
// and the host can still start processes meanwhile.
func TestForkBombStoppedHostResponsive(t *testing.T) {
	s := newTestSandbox(t)
	done := make(chan Receipt, 1)
	go func() {
		done <- runUnqualified(t, s, testCtx(t), Spec{Path: "/usr/bin/dash",
			Args:   []string{"-c", "b() { b | b & }; b; sleep 1"},
			Limits: Limits{Pids: 64, Wall: 3 * time.Second}})
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	if err := exec.Command("/usr/bin/true").Run(); err != nil {
		t.Fatalf("host cannot start a process during the fork bomb: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("host process start took %v during the fork bomb", d)
	}
	r := <-done
	if r.Observed.PidsLimitHits == 0 || r.Observed.PidsMax != 64 || !r.TreeEmpty {
		t.Errorf("pids not limited: %+v, tree empty %v", r.Observed, r.TreeEmpty)
	}
}

// TestMemoryHogOOM: allocation beyond the ceiling ends out_of_memory, and
// the recorded ceiling comes from the cgroup file.
func TestMemoryHogOOM(t *testing.T) {
	res, err := newTestSandbox(t).RunProbe(testCtx(t), "memory")
	if err != nil || !res.Contained || res.Exit != "out_of_memory" {
		t.Fatalf("memory probe: %+v %v", res, err)
	}
}

// TestSetsidGrandchildGoneAfterCancel: a setsid, double-forked sleeper is
// gone after cancellation and the cgroup is verified empty.
func TestSetsidGrandchildGoneAfterCancel(t *testing.T) {
	s := newTestSandbox(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	w := &lineWatch{want: "started", hit: cancel}
	r := runUnqualified(t, s, ctx, Spec{Path: "/usr/bin/dash",
		Args:   []string{"-c", "/usr/bin/setsid /usr/bin/dash -c 'trap \"\" TERM; sleep 600 & ' ; echo started; sleep 600"},
		Stdout: w})
	if r.Exit.Class != ExitCancelled || !r.TreeEmpty {
		t.Errorf("exit %v, tree empty %v", r.Exit, r.TreeEmpty)
	}
}

// TestUnverifiedKillIsUncertain: when the tree cannot be confirmed empty
// the run is uncertain, never success (R-073 injected kill failure).
func TestUnverifiedKillIsUncertain(t *testing.T) {
	s := newTestSandbox(t)
	testOnlyBreakKill = true
	t.Cleanup(func() { testOnlyBreakKill = false })
	r := runUnqualified(t, s, testCtx(t), Spec{Path: "/usr/bin/sleep", Args: []string{"600"},
		Limits: Limits{Wall: 100 * time.Millisecond}})
	if r.Exit.Class != ExitUncertain || r.TreeEmpty || r.Exit.Success() {
		t.Errorf("exit %v, tree empty %v; want uncertain", r.Exit, r.TreeEmpty)
	}
}

// TestEnvOnlyAllowlisted: `env` inside shows only allowlisted names; host
// and caller credentials never arrive.
func TestEnvOnlyAllowlisted(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-"+strings.Repeat("C", 20))
	var out bytes.Buffer
	r := runUnqualified(t, newTestSandbox(t), testCtx(t), Spec{Path: "/usr/bin/env",
		Env: []string{"GOFLAGS=-mod=mod", "OPENAI_API_KEY=sk-" + strings.Repeat("D", 20)}, Stdout: &out})
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		names = append(names, strings.SplitN(l, "=", 2)[0])
	}
	sortStrings(names)
	if diff := cmp.Diff([]string{"GOFLAGS", "HOME", "LANG", "PATH", "TMPDIR"}, names); diff != "" {
		t.Errorf("child env names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"OPENAI_API_KEY"}, r.EnvRemoved); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
}

// TestMissingCapabilityRefuses: a required capability the host lacks
// (simulated by configuration) refuses with SANDBOX_UNAVAILABLE and
// nothing runs.
func TestMissingCapabilityRefuses(t *testing.T) {
	h, err := readHost()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	spec := Spec{Path: "/usr/bin/touch", Args: []string{marker}}
	for name, cfg := range map[string]Config{
		"landlock": {StateDir: t.TempDir(), MinLandlockABI: h.abi + 1},
		"cgroup":   {StateDir: t.TempDir(), CgroupRoot: "/nonexistent"},
	} {
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		j, _ := s.admit(spec)
		_, err = s.runJob(testCtx(t), j, "")
		if fe := fault.From(err); fe == nil || fe.Code != fault.SandboxUnavailable || fe.Details["missing"] == "" {
			t.Errorf("%s: err = %v, want SANDBOX_UNAVAILABLE naming what is missing", name, err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran although the sandbox was refused")
	}
}

// TestRunRequiresQualification: without a record and without AutoQualify
// a run is refused; Qualify stores a passing record and admits runs.
func TestRunRequiresQualification(t *testing.T) {
	s := newTestSandbox(t)
	_, err := s.Run(testCtx(t), Spec{Path: "/usr/bin/true"})
	if !fault.HasCode(err, fault.SandboxUnavailable) {
		t.Fatalf("unqualified run: %v, want SANDBOX_UNAVAILABLE", err)
	}
	q, err := s.Qualify(testCtx(t))
	if err != nil || !q.Passed {
		t.Fatalf("qualify: %v, failed %v", err, q.Failed())
	}
	r, err := s.Run(testCtx(t), Spec{Path: "/usr/bin/true"})
	if err != nil || !r.Exit.Success() || r.BinaryDigest != q.BinaryDigest {
		t.Fatalf("qualified run: %+v %v", r.Exit, err)
	}
	// A fresh Sandbox on the same state dir reuses the stored record.
	s2, _ := New(Config{StateDir: s.cfg.StateDir})
	if _, err := s2.Run(testCtx(t), Spec{Path: "/usr/bin/true"}); err != nil {
		t.Errorf("stored record not reused: %v", err)
	}
}

// TestOutputLimit: output beyond the ceiling ends the run output_limit and
// no more than the ceiling is forwarded.
func TestOutputLimit(t *testing.T) {
	var out bytes.Buffer
	r := runUnqualified(t, newTestSandbox(t), testCtx(t), Spec{Path: "/usr/bin/yes", Stdout: &out,
		Limits: Limits{Output: 4096}})
	if r.Exit.Class != ExitOutputLimit || out.Len() != 4096 {
		t.Errorf("exit %v, forwarded %d bytes", r.Exit, out.Len())
	}
}

// panicWriter panics on its first Write, as a delegate job's activity
// reader would on a bug in its parser of what the agent wrote.
type panicWriter struct{ calls int }

func (p *panicWriter) Write(b []byte) (int, error) {
	p.calls++
	panic("activity parser bug")
}

// TestOutputWriterPanic: a writer that panics (on the copier goroutine
// the supervisor starts) does not end the process running the sandbox:
// the pipe is still drained, so a command writing far past the pipe's
// buffer exits normally, and nothing more reaches the writer.
func TestOutputWriterPanic(t *testing.T) {
	w := &panicWriter{}
	var errOut bytes.Buffer
	r := runUnqualified(t, newTestSandbox(t), testCtx(t), Spec{Path: "/usr/bin/head", Args: []string{"-c", "1048576", "/dev/zero"},
		Stdout: w, Stderr: &errOut})
	if r.Exit.Class != ExitExited || r.Exit.Code != 0 || w.calls != 1 {
		t.Errorf("exit %v, writer called %d times; want ok after one call (stderr %q)", r.Exit, w.calls, errOut.String())
	}
}
