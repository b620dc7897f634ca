//go:build linux && amd64

package sandbox

import (
	"bytes"
	"context"
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

func TestRunTrue(t *testing.T) {
	s := newTestSandbox(t)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := runUnqualified(t, s, ctx, Spec{Path: "/usr/bin/dash", Args: []string{"-c", "echo hi; id; ls /; cat /proc/self/status | grep -i cap"}, Stdout: &out, Stderr: &out})
	t.Logf("%s\n%s", out.String(), r.JSON())
}
