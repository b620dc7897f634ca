package agy

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/process"
	"github.com/coagent8/coagent8/internal/semver"
)

// probeCache remembers one --version probe per executable identity, so
// doctor never re-runs it within the TTL (AUD-P1-4). Turns do not probe.
type probeCache struct {
	path    string
	size    int64
	mtime   time.Time
	version string
	at      time.Time
}

const probeTTL = 10 * time.Minute

// Probe reports installation, version and unverified auth evidence without
// sending a prompt. Limitations always start with [Limitation] and name the
// inherited MCP servers and plugins.
func (b *Backend) Probe(ctx context.Context) adapter.Probe {
	pr := adapter.Probe{Backend: Name, AuthStatus: "unknown", Limitations: []string{Limitation}}
	inh := Discover(b.env, "")
	pr.Limitations = append(pr.Limitations, inh.Lines()...)
	pr.AuthEvidence = b.authEvidence()
	path, searched, err := process.Resolve(b.env, "agy", "AGY_PATH", "GEMINI_PATH")
	pr.Searched = searched
	if err != nil {
		pr.Error = probeError(err)
		return pr
	}
	pr.Installed, pr.Path = true, path
	v, err := b.versionOf(ctx, path)
	pr.Version = v
	if err != nil {
		pr.Error = probeError(err)
		return pr
	}
	pr.Supported = true // no known minimum version (backends.md §3)
	return pr
}

func (b *Backend) versionOf(ctx context.Context, path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fault.Wrap(fault.CLINotFound, "cli.stat", "agy CLI not found", err)
	}
	b.mu.Lock()
	c := b.version
	b.mu.Unlock()
	if c.path == path && c.size == st.Size() && c.mtime.Equal(st.ModTime()) && time.Since(c.at) < probeTTL {
		return c.version, nil
	}
	v, err := semver.Probe(ctx, path, b.environ(), []string{"--version"})
	if err != nil {
		return "", err
	}
	b.mu.Lock()
	b.version = probeCache{path: path, size: st.Size(), mtime: st.ModTime(), version: v, at: time.Now()}
	b.mu.Unlock()
	return v, nil
}

// authEvidence lists what suggests a login, as unverified evidence only:
// the presence of a file or variable proves nothing (AUD-P2-2), so the
// probe's AuthStatus stays "unknown".
func (b *Backend) authEvidence() []string {
	var out []string
	if v, ok := b.env.Lookup("GEMINI_API_KEY"); ok && v != "" {
		out = append(out, "GEMINI_API_KEY is set (unverified)")
	}
	dir := configDir(b.env)
	for _, rel := range []string{"antigravity/antigravity_state.pbtxt", "oauth_creds.json", "google_accounts.json"} {
		if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel))); err == nil && st.Mode().IsRegular() {
			out = append(out, tilde(b.env, filepath.Join(dir, filepath.FromSlash(rel)))+" exists (unverified)")
		}
	}
	return out
}

func probeError(err error) *adapter.ProbeError {
	fe := fault.From(err)
	return &adapter.ProbeError{Code: string(fe.Code), Reason: fe.Reason, Message: fe.Message}
}
