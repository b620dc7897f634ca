package verify

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// Paths inside the sandbox (package sandbox's layout: scratch is the
// writable HOME, the workspace copy is the working directory).
const (
	insideScratch = "/job/scratch"
	systemPath    = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// childEnv is the environment every check gets. PATH starts with the
// directories of the configured programs (so "go" finds its own tools);
// Go's caches live in scratch, the module proxy is off (there is no
// network) and the toolchain is the one configured, never a download.
// A host module cache, when bound read-only, is used as is.
func childEnv(cmds [][]string, modCache string) []string {
	var dirs []string
	for _, argv := range cmds {
		if d := filepath.Dir(argv[0]); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	if modCache == "" {
		modCache = insideScratch + "/go/pkg/mod"
	}
	return []string{
		"PATH=" + strings.Join(append(dirs, systemPath), ":"),
		"TMPDIR=" + insideScratch, // the sandbox's /tmp is a small tmpfs charged to memory
		"GOPATH=" + insideScratch + "/go",
		"GOCACHE=" + insideScratch + "/go-build",
		"GOMODCACHE=" + modCache,
		"GOPROXY=off",
		"GOTOOLCHAIN=local",
		"GOFLAGS=-buildvcs=false",
		"CI=true",
	}
}

// GoModCache returns the user's Go module cache directory from env
// (GOMODCACHE, else GOPATH's first entry + /pkg/mod, else ~/go/pkg/mod),
// canonical, when it exists, is a module cache (it has cache/download),
// is neither HOME nor above it, and can be bound into the sandbox; else "".
// It reads no process state: env is config's snapshot.
func GoModCache(env config.Env) string {
	dir := env.Get("GOMODCACHE")
	if dir == "" {
		if gp := filepath.SplitList(env.Get("GOPATH")); len(gp) > 0 && gp[0] != "" {
			dir = filepath.Join(gp[0], "pkg", "mod")
		} else if h := env.Home(); h != "" {
			dir = filepath.Join(h, "go", "pkg", "mod")
		}
	}
	if !filepath.IsAbs(dir) {
		return ""
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil || real == "/tmp" || strings.HasPrefix(real, "/tmp/") || sandbox.CheckPath(real) != nil {
		return ""
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return ""
	}
	// The directory is bound read-only into checks that run the agent's
	// code: only a Go module cache (Go keeps cache/download in every one
	// it has used), never HOME or a directory above it (GOMODCACHE=$HOME
	// would show ~/.ssh, ~/.claude and the gate's key to the check, whose
	// output reaches the caller).
	if h := env.Home(); h != "" {
		if hr, err := filepath.EvalSymlinks(h); err == nil && (hr == real || strings.HasPrefix(hr, real+"/") || real == "/") {
			return ""
		}
	}
	if fi, err := os.Stat(filepath.Join(real, "cache", "download")); err != nil || !fi.IsDir() {
		return ""
	}
	return real
}
