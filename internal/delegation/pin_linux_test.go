//go:build linux && amd64

package delegation

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestRuntimePinCheck: the check the sandbox runs on the mounted
// executable accepts the file whose key the digest was taken at (no
// re-hash), or any file whose SHA-256 is the runtime's digest, and
// refuses other content with delegation.runtime_digest (issue 15 scope
// 5: what is mounted is what was qualified).
func TestRuntimePinCheck(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "cli")
	if err := os.WriteFile(exe, []byte("qualified\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	rt, err := ResolveRuntime(exe)
	if err != nil || rt.key == "" {
		t.Fatalf("resolve: %+v %v (want a key)", rt, err)
	}
	rewrite := func(body string) {
		t.Helper()
		time.Sleep(10 * time.Millisecond) // a new mtime whatever the clock granularity
		if err := os.WriteFile(exe, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		change func()
		reason string // "" = accepted
	}{
		{"unchanged", func() {}, ""},
		{"rewritten, same content", func() { rewrite("qualified\n") }, ""},
		{"other content", func() { rewrite("swapped\n") }, "delegation.runtime_digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.change()
			f, err := os.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			err = runtimePin(rt).Check(f)
			var fe *fault.Error
			switch {
			case tc.reason == "" && err != nil:
				t.Errorf("check: %v, want accepted", err)
			case tc.reason != "" && (!errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != tc.reason):
				t.Errorf("check: %v, want SANDBOX_UNAVAILABLE %s", err, tc.reason)
			}
		})
	}
	if got := runtimePin(rt).Path; got != rt.Executable {
		t.Errorf("pin path %q, want %q", got, rt.Executable)
	}
}
