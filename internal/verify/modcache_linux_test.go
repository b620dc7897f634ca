//go:build linux

package verify

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
)

// TestGoModCacheOnlyAModuleCache: the directory bound read-only into
// checks (which run the agent's code, and whose output reaches the
// caller) is a Go module cache, never HOME or a directory above it and
// never a directory that is no module cache (GOMODCACHE=$HOME or
// GOMODCACHE=~/.ssh showed those files to the check). It lives outside
// /tmp because GoModCache never binds below /tmp.
func TestGoModCacheOnlyAModuleCache(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "coagent8-modcache-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	base, _ = filepath.EvalSymlinks(base)
	home := filepath.Join(base, "home", "u")
	mod := filepath.Join(home, "go", "pkg", "mod")
	ssh := filepath.Join(home, ".ssh")
	for _, d := range []string{filepath.Join(mod, "cache", "download"), ssh} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, gomodcache, want string
	}{
		{"the module cache", mod, mod},
		{"the default ~/go/pkg/mod", "", mod},
		{"HOME itself", home, ""},
		{"above HOME", filepath.Dir(home), ""},
		{"a directory that is no module cache", ssh, ""},
	}
	var got, want []string
	for _, tt := range tests {
		env := []string{"HOME=" + home}
		if tt.gomodcache != "" {
			env = append(env, "GOMODCACHE="+tt.gomodcache)
		}
		got = append(got, tt.name+": "+GoModCache(config.FromList(env)))
		want = append(want, tt.name+": "+tt.want)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GoModCache (-want +got):\n%s", d)
	}
}
