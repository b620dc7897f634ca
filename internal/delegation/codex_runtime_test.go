package delegation

import (
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
)

// TestResolveCodexRuntime: the npm launcher (a node script) resolves to
// the platform package's native binary, beside @openai/codex or nested
// under its node_modules; a native binary given directly is itself; a
// launcher without its native binary is CLI_NOT_FOUND (never the node
// script: node is not in the sandbox).
func TestResolveCodexRuntime(t *testing.T) {
	v, ok := codexVendor[goruntime.GOARCH]
	if !ok {
		v = [2]string{"codex-unknown", "unknown"} // no native package here: nothing resolves
	}
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	layout := func(nested bool) (launcher, native string) {
		nm := filepath.Join(t.TempDir(), "node_modules")
		launcher = filepath.Join(nm, "@openai", "codex", "bin", "codex.js")
		write(launcher, "#!/usr/bin/env node\n")
		base := filepath.Join(nm, "@openai")
		if nested {
			base = filepath.Join(nm, "@openai", "codex", "node_modules", "@openai")
		}
		native = filepath.Join(base, v[0], "vendor", v[1], "bin", "codex")
		write(native, "\x7fELF native")
		return launcher, native
	}
	for _, nested := range []bool{false, true} {
		launcher, native := layout(nested)
		link := filepath.Join(t.TempDir(), "codex")
		if err := os.Symlink(launcher, link); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{link, launcher, native} {
			rt, err := ResolveCodexRuntime(p)
			if !ok && p != native {
				if fault.From(err) == nil || fault.From(err).Code != fault.CLINotFound {
					t.Errorf("ResolveCodexRuntime(%s) on %s = %v, want CLI_NOT_FOUND", p, goruntime.GOARCH, err)
				}
				continue
			}
			if err != nil || rt.Executable != native || !rt.IsCodex() || rt.Provider() != gate.OpenAI || rt.Digest == "" {
				t.Errorf("ResolveCodexRuntime(%s) = %+v, %v; want the native binary %s as codex", p, rt, err, native)
			}
		}
	}
	bare := filepath.Join(t.TempDir(), "@openai", "codex", "bin", "codex.js")
	write(bare, "#!/usr/bin/env node\n")
	_, err := ResolveCodexRuntime(bare)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.CLINotFound {
		t.Errorf("a launcher without its native binary: %v, want CLI_NOT_FOUND", err)
	}
}
