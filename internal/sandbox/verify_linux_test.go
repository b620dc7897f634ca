//go:build linux && amd64

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

// verifyLayers makes a workspace with "file.txt" = "old\n" and an upper
// layer that rewrites it to "new\n", both canonical.
func verifyLayers(t *testing.T) (ws, upper string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, upper = filepath.Join(dir, "ws"), filepath.Join(dir, "upper")
	for _, d := range []string{ws, upper} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(os.WriteFile(filepath.Join(ws, "file.txt"), []byte("old\n"), 0o644),
		os.WriteFile(filepath.Join(upper, "file.txt"), []byte("new\n"), 0o644)); err != nil {
		t.Fatal(err)
	}
	return ws, upper
}

// TestRunVerify: a check in the verify profile reads the merged
// candidate, cannot write it, and its receipt names the verify profile
// with a policy digest of its own.
func TestRunVerify(t *testing.T) {
	s := newTestSandbox(t)
	ws, upper := verifyLayers(t)
	var out bytes.Buffer
	spec := VerifySpec{Spec: Spec{Path: "/usr/bin/dash", Stdout: &out, Stderr: &out,
		Args: []string{"-c", "cat file.txt; echo x > file.txt || echo refused; touch /job/scratch/ok && echo scratch"}},
		Workspace: ws, Upper: upper}
	j, err := s.admitVerify(spec)
	if err != nil {
		t.Fatalf("admitVerify: %v", err)
	}
	r, err := s.runJob(context.Background(), j, "test")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	got := out.String()
	if !r.Exit.Success() || !bytes.Contains(out.Bytes(), []byte("new\n")) || !bytes.Contains(out.Bytes(), []byte("refused\n")) ||
		!bytes.Contains(out.Bytes(), []byte("scratch\n")) {
		t.Errorf("exit %v, output %q: want the upper layer's file, a refused write and a writable scratch", r.Exit, got)
	}
	if r.Profile != ProfileVerify || r.PolicyDigest != verifyPolicyDigest() || r.PolicyDigest == policyDigest() ||
		r.PolicyDigest == agentPolicyDigest(DefaultGatePort, ProfileRead) {
		t.Errorf("receipt profile %q digest %s: want %q with its own digest", r.Profile, r.PolicyDigest, ProfileVerify)
	}
	for p, want := range map[string]string{filepath.Join(ws, "file.txt"): "old\n", filepath.Join(upper, "file.txt"): "new\n"} {
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Errorf("%s = %q after the check, want %q", p, b, want)
		}
	}
}

// TestVerifyAdmission: every inadmissible verify spec is INVALID_INPUT
// sandbox.verify before anything runs.
func TestVerifyAdmission(t *testing.T) {
	s := newTestSandbox(t)
	ws, upper := verifyLayers(t)
	for name, spec := range map[string]VerifySpec{
		"input copy":    {Spec: Spec{Path: "/usr/bin/true", Input: ws}, Workspace: ws, Upper: upper},
		"working dir":   {Spec: Spec{Path: "/usr/bin/true", Dir: "sub"}, Workspace: ws, Upper: upper},
		"no workspace":  {Spec: Spec{Path: "/usr/bin/true"}, Upper: upper},
		"no upper":      {Spec: Spec{Path: "/usr/bin/true"}, Workspace: ws},
		"relative":      {Spec: Spec{Path: "/usr/bin/true"}, Workspace: ws, Upper: "upper"},
		"upper inside":  {Spec: Spec{Path: "/usr/bin/true"}, Workspace: filepath.Dir(ws), Upper: upper},
		"missing upper": {Spec: Spec{Path: "/usr/bin/true"}, Workspace: ws, Upper: upper + "-gone"},
	} {
		_, err := s.RunVerify(context.Background(), spec)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.InvalidInput || fe.Reason != "sandbox.verify" {
			t.Errorf("%s: err %v, want INVALID_INPUT sandbox.verify", name, err)
		}
	}
}
