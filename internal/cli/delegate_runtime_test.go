package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/delegation"
)

// TestRuntimeCache: a qualified runtime is reused while its CLI file is
// unchanged, and not after a write (new modification time or size) or a
// replacement (another file at the path).
func TestRuntimeCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "claude")
	write := func(body string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		name   string
		change func()
		want   bool
	}{
		{"unchanged", func() {}, true},
		{"rewritten, same size, new mtime", func() { write("v1", t0.Add(time.Second)) }, false},
		{"rewritten, other size, same mtime", func() { write("v1-longer", t0) }, false},
		{"replaced by another file", func() {
			repl := filepath.Join(dir, "new")
			if err := os.WriteFile(repl, []byte("v1"), 0o755); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(repl, t0, t0)
			if err := os.Rename(repl, path); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write("v1", t0)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			var c runtimeCache
			c.put("claude\x00"+path, delegation.Runtime{Executable: path, Digest: "sha256:x"}, fi)
			tc.change()
			if _, got := c.get("claude\x00"+path, path); got != tc.want {
				t.Errorf("get after %s = %v, want %v", tc.name, got, tc.want)
			}
		})
	}
}
