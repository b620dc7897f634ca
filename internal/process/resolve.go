package process

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
)

// Resolve finds a CLI without a shell (backends.md §0): the first of the
// override variables that is set (it must name an absolute executable
// file), else each PATH entry in order. It returns the absolute path and
// the places searched; a miss is CLI_NOT_FOUND listing them.
func Resolve(env config.Env, name string, overrides ...string) (path string, searched []string, err error) {
	for _, k := range overrides {
		v, ok := env.Lookup(k)
		if !ok || v == "" {
			continue
		}
		searched = append(searched, k+"="+v)
		if !filepath.IsAbs(v) {
			return "", searched, fault.New(fault.CLINotFound, "cli.override_relative",
				k+" must be an absolute path to the "+name+" executable")
		}
		if isExecutable(v) {
			return filepath.Clean(v), searched, nil
		}
		return "", searched, notFound(name, searched, overrides)
	}
	seen := map[string]bool{}
	for _, dir := range filepath.SplitList(env.Get("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) || seen[filepath.Clean(dir)] {
			continue // relative entries would resolve against the workspace; repeats add nothing
		}
		seen[filepath.Clean(dir)] = true
		for _, cand := range candidates(dir, name, env) {
			searched = append(searched, cand)
			if isExecutable(cand) {
				return cand, searched, nil
			}
		}
	}
	return "", searched, notFound(name, searched, overrides)
}

// notFound is the CLI_NOT_FOUND of name, listing the places searched and,
// when name has an override variable, the two ways to fix it (the same
// remedy on every surface: consult, review, delegate, doctor).
func notFound(name string, searched, overrides []string) error {
	msg := name + " CLI not found; searched: " + strings.Join(limit(searched, 12), ", ")
	if len(overrides) > 0 {
		msg += "; " + PathHint(overrides[0])
	}
	return fault.New(fault.CLINotFound, "cli.not_found", msg).With("searched", strings.Join(searched, string(os.PathListSeparator)))
}

// PathHint is the remedy of a CLI not found whose override variable is v.
func PathHint(v string) string {
	return "install it on PATH or set " + v + " to its absolute path (a coagent8 checkout's .tools/ copies are for its tests, see the README)"
}

func limit(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), "…")
}

func candidates(dir, name string, env config.Env) []string {
	if runtime.GOOS != "windows" {
		return []string{filepath.Join(dir, name)}
	}
	exts := env.Get("PATHEXT")
	if exts == "" {
		exts = ".COM;.EXE;.BAT;.CMD"
	}
	var out []string
	for _, e := range strings.Split(exts, ";") {
		if e != "" {
			out = append(out, filepath.Join(dir, name+strings.ToLower(e)))
		}
	}
	return out
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	if err != nil || st.IsDir() {
		return false
	}
	if runtime.GOOS == "windows" {
		return true
	}
	return st.Mode().Perm()&0o111 != 0
}
