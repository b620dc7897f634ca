//go:build linux && amd64

package sandbox

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func newTestSandbox(t *testing.T) *Sandbox {
	t.Helper()
	s, err := New(Config{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runUnqualified runs spec without the qualification gate (unit tests of
// the run path; qualification itself is tested separately).
func runUnqualified(t *testing.T, s *Sandbox, ctx context.Context, spec Spec) Receipt {
	t.Helper()
	j, err := s.admit(spec)
	if err != nil {
		t.Fatalf("admit: %v", err)
	}
	r, err := s.runJob(ctx, j, "test")
	if err != nil {
		t.Fatalf("run: %v (%#v)", err, err)
	}
	return r
}

// TestRunShell: the command runs in the synthesized root, in the
// workspace, with no capabilities, as nobody when the supervisor is root.
func TestRunShell(t *testing.T) {
	s := newTestSandbox(t)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := runUnqualified(t, s, ctx, Spec{Path: "/usr/bin/dash",
		Args:   []string{"-c", "echo hi; pwd; id -u; ls /; grep ^CapEff /proc/self/status; hostname"},
		Stdout: &out, Stderr: &out})
	if !r.Exit.Success() || !r.TreeEmpty {
		t.Fatalf("exit %+v tree_empty %v\n%s", r.Exit, r.TreeEmpty, out.String())
	}
	wantUID := "0"
	if os.Geteuid() == 0 {
		wantUID = "65534"
	}
	got := strings.Fields(out.String())
	want := []string{"hi", insideWorkspace, wantUID}
	for _, d := range []string{"dev", "etc", "job", "proc", "tmp", "usr"} {
		want = append(want, d)
	}
	if len(got) < len(want) {
		t.Fatalf("output %q, want it to start with %q", got, want)
	}
	for i, w := range want[:3] {
		if got[i] != w {
			t.Errorf("line %d = %q, want %q", i, got[i], w)
		}
	}
	for _, w := range want[3:] {
		if !strings.Contains(out.String(), "\n"+w+"\n") {
			t.Errorf("ls / lacks %q:\n%s", w, out.String())
		}
	}
	if !strings.Contains(out.String(), "CapEff:\t0000000000000000") || !strings.HasSuffix(out.String(), "sandbox\n") {
		t.Errorf("want no effective capabilities and hostname sandbox:\n%s", out.String())
	}
}

// TestJobRootRemoved: the job root is gone after a run, whether the
// command left its folders empty or wrote into them.
func TestJobRootRemoved(t *testing.T) {
	s := newTestSandbox(t)
	for name, args := range map[string][]string{
		"empty":   {"-c", "true"},
		"written": {"-c", "mkdir -p /job/workspace/a/b && echo x > /job/workspace/a/b/f && echo y > /job/scratch/g && echo z > /job/artifacts/h"},
	} {
		r := runUnqualified(t, s, testCtx(t), Spec{Path: "/usr/bin/dash", Args: args})
		if !r.Exit.Success() {
			t.Fatalf("%s: exit %+v", name, r.Exit)
		}
		if _, err := os.Lstat(s.cfg.JobsDir + "/" + r.JobID); !os.IsNotExist(err) {
			t.Errorf("%s: job root still there (Lstat err %v)", name, err)
		}
	}
}
