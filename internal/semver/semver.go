// Package semver reads a CLI's version (the leading X.Y.Z of its --version
// output) and compares dotted numeric versions.
package semver

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// Patterns compile on first use (sync.OnceValue), not at package init,
// which every coagent8 process start pays, the sandbox helper included
// (issue 8 performance).
var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`) })

// Parse returns the first X.Y.Z in s, or "".
func Parse(s string) string { return versionRE().FindString(s) }

// Less reports whether a < b for dotted numeric versions; an unparsable a
// counts as older than anything.
func Less(a, b string) bool {
	pa, okA := parts(a)
	pb, _ := parts(b)
	if !okA {
		return true
	}
	for i := range 3 {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func parts(v string) ([3]int, bool) {
	var out [3]int
	f := strings.Split(Parse(v), ".")
	if len(f) != 3 {
		return out, false
	}
	for i, s := range f {
		out[i], _ = strconv.Atoi(s)
	}
	return out, true
}

// Output runs path with args (no shell, explicit env, cwd "/") and returns
// stdout, bounded to 64 KiB, within timeout.
func Output(ctx context.Context, path string, env, args []string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout = &limited{w: &out, n: 64 << 10}
	err := cmd.Run()
	return out.Bytes(), err
}

// Probe runs `path args` (5 s) and parses the version from its output.
func Probe(ctx context.Context, path string, env, args []string) (string, error) {
	out, err := Output(ctx, path, env, args, 5*time.Second)
	v := Parse(string(out))
	if v == "" {
		return "", fault.Wrap(fault.CLIUnsupported, "cli.version_unreadable",
			"could not read the CLI version from "+path+" --version", err)
	}
	return v, nil
}

type limited struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return len(p), nil
	}
	q := p
	if len(q) > l.n {
		q = q[:l.n]
	}
	l.n -= len(q)
	_, err := l.w.Write(q)
	return len(p), err
}
