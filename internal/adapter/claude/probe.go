package claude

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/process"
	"github.com/coagent8/coagent8/internal/semver"
)

// probeCache remembers one version probe per executable identity, so a
// turn costs no extra subprocess once probed (AUD-P1-4).
type probeCache struct {
	key     cacheKey
	version string
	at      time.Time
}

type cacheKey struct {
	path  string
	size  int64
	mtime time.Time
}

const (
	probeTTL      = 10 * time.Minute
	probeDeadline = 20 * time.Second
)

type binary struct {
	path    string
	version string
}

// probeBinary resolves the CLI and checks its version (cached).
func (b *Backend) probeBinary(ctx context.Context) (binary, error) {
	path, _, err := process.Resolve(b.env, "claude", "CLAUDE_PATH")
	if err != nil {
		return binary{}, err
	}
	key, err := identity(path)
	if err != nil {
		return binary{}, fault.Wrap(fault.CLINotFound, "cli.stat", "claude CLI not found: "+path, err)
	}
	b.mu.Lock()
	c := b.cache
	b.mu.Unlock()
	if c.key == key && time.Since(c.at) < probeTTL {
		return binary{path: path, version: c.version}, supported(c.version)
	}
	v, err := semver.Probe(ctx, path, b.environ(), []string{"--version"})
	if err != nil {
		return binary{}, err
	}
	b.mu.Lock()
	b.cache = probeCache{key: key, version: v, at: time.Now()}
	b.mu.Unlock()
	return binary{path: path, version: v}, supported(v)
}

func identity(path string) (cacheKey, error) {
	st, err := os.Stat(path)
	if err != nil {
		return cacheKey{}, err
	}
	return cacheKey{path: path, size: st.Size(), mtime: st.ModTime()}, nil
}

func supported(v string) error {
	if semver.Less(v, MinVersion) {
		return fault.New(fault.CLIUnsupported, "claude.version",
			"Claude Code "+v+" is too old; the read-only profile needs "+MinVersion+" or newer.").With("minimum", MinVersion)
	}
	return nil
}

// Probe reports installation, version and login state without sending a
// prompt (doctor).
func (b *Backend) Probe(ctx context.Context) adapter.Probe {
	pr := adapter.Probe{Backend: Name, MinVersion: MinVersion, AuthStatus: "unknown", DefaultModel: DefaultModel}
	path, searched, err := process.Resolve(b.env, "claude", "CLAUDE_PATH")
	pr.Searched = searched
	if err != nil {
		pr.Error = probeError(err)
		return pr
	}
	pr.Installed, pr.Path = true, path
	bin, err := b.probeBinary(ctx)
	pr.Version = bin.version
	if err != nil {
		pr.Error = probeError(err)
		return pr
	}
	pr.Supported = true
	b.authStatus(ctx, path, &pr)
	return pr
}

// authStatus runs `claude auth status --json` (evidence only).
func (b *Backend) authStatus(ctx context.Context, path string, pr *adapter.Probe) {
	out, err := semver.Output(ctx, path, b.environ(), []string{"auth", "status", "--json"}, 10*time.Second)
	var st struct {
		LoggedIn   *bool  `json:"loggedIn"`
		AuthMethod string `json:"authMethod"`
	}
	if err != nil && len(out) == 0 {
		return
	}
	if json.Unmarshal(out, &st) != nil || st.LoggedIn == nil {
		return
	}
	pr.AuthMethod = st.AuthMethod
	pr.AuthEvidence = []string{"claude auth status --json"}
	if *st.LoggedIn {
		pr.AuthStatus = "authenticated"
	} else {
		pr.AuthStatus = "unauthenticated"
	}
}

func probeError(err error) *adapter.ProbeError {
	fe := fault.From(err)
	return &adapter.ProbeError{Code: string(fe.Code), Reason: fe.Reason, Message: fe.Message}
}
