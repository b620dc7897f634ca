//go:build linux && amd64

package delegation

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/secret"
)

// TestChangedRuntimeRefuses: a qualified copy of the pinned Claude Code
// with one byte changed is refused with SANDBOX_UNAVAILABLE before
// anything starts (the double sees nothing), whether the runtime was
// resolved before the change (its digest no longer matches the file) or
// after it (no qualification binds the new digest); an unqualified
// runtime is refused too (issue 15 scope 5, test "qualification refuses
// a changed CLI").
func TestChangedRuntimeRefuses(t *testing.T) {
	src, err := ResolveRuntime(pinnedCLI(t, "claude"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/var/tmp", "coagent8-runtime-") // /tmp is the sandbox's own
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	exe := filepath.Join(dir, "claude")
	copyFile(t, src.Executable, exe)
	rt, err := ResolveRuntime(exe)
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t)
	double := providertest.NewAnthropic(t, providertest.Options{})
	job := func(rt Runtime) Job {
		ws, cand := t.TempDir(), t.TempDir()
		return Job{Runtime: rt, Model: "claude-sonnet-4-5", Prompt: "p", Workspace: ws, CandidateDir: cand,
			Phantom: secret.New("phantom-synthetic"), Grant: "grant-unused", Gate: newGate(t, double.URL())}
	}
	want := func(name string, err error, reason string) {
		t.Helper()
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != reason {
			t.Errorf("%s: err %v, want SANDBOX_UNAVAILABLE %s", name, err, reason)
		} else {
			t.Logf("%s: %s", name, fe.Message)
		}
	}
	_, err = r.Run(testCtx(t), job(rt))
	want("unqualified", err, "delegation.runtime_unqualified")
	qualify(t, r, rt)

	f, err := os.OpenFile(exe, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, 4096); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x01
	if _, err := f.WriteAt(b, 4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = r.Run(testCtx(t), job(rt))
	want("resolved before the change", err, "delegation.runtime_digest")
	changed, err := ResolveRuntime(exe)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(testCtx(t), job(changed))
	want("resolved after the change", err, "delegation.runtime_digest")
	if n := len(double.Requests()); n != 0 {
		t.Errorf("the double saw %d requests from a refused runtime", n)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
