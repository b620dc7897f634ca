package delegation

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
)

// Runtime is a pinned CLI as the sandbox runs it: the canonical path of
// the file that is executed (symlinks such as node_modules/.bin/claude
// resolved) and its SHA-256.
type Runtime struct {
	// Executable is the canonical absolute path of the executed file.
	Executable string
	// Digest is "sha256:<hex>" of Executable's content.
	Digest string
	// Backend is the CLI: [BackendClaude] (also the zero value) or
	// [BackendCodex] ([ResolveCodexRuntime]).
	Backend string
	// key is the file key (fileKey) of the content Digest was taken from,
	// "" when unknown: a pinned mount with this key needs no re-hash
	// (runtimePin).
	key string
}

// Backends a [Runtime] can be.
const (
	BackendClaude = "claude"
	BackendCodex  = "codex"
)

// IsCodex reports whether rt is the pinned Codex.
func (rt Runtime) IsCodex() bool { return rt.Backend == BackendCodex }

// Provider is the gate provider rt's model requests go to: OpenAI's
// Responses API for Codex, Anthropic's Messages API for Claude Code. The
// job's grant must be for this provider.
func (rt Runtime) Provider() gate.Provider {
	if rt.IsCodex() {
		return gate.OpenAI
	}
	return gate.Anthropic
}

// ResolveRuntime resolves path (e.g. .tools/node_modules/.bin/claude) to
// the file it runs and digests it, as a Claude Code runtime (Codex:
// [ResolveCodexRuntime]). Errors are fault.CLINotFound.
func ResolveRuntime(path string) (Runtime, error) {
	real, err := filepath.EvalSymlinks(path)
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return Runtime{}, fault.Wrap(fault.CLINotFound, "delegation.runtime", "the delegated CLI was not found", err)
	}
	d, key, err := digestKey(real)
	if err != nil {
		return Runtime{}, fault.Wrap(fault.CLINotFound, "delegation.runtime", "the delegated CLI cannot be read", err)
	}
	return Runtime{Executable: real, Digest: d, Backend: BackendClaude, key: key}, nil
}

func fileDigest(p string) (string, error) {
	d, _, err := digestKey(p)
	return d, err
}

// digestKey digests the file at p (not following a final symlink)
// through one descriptor and returns the file key of that content: the
// key before and after the read must agree (a write during the read
// changes it), else an error.
func digestKey(p string) (digest, key string, err error) {
	f, err := os.OpenFile(p, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	before, kerr := fdKey(f)
	if digest, err = readerDigest(f); err != nil {
		return "", "", err
	}
	if after, err := fdKey(f); kerr == nil && err == nil && after == before {
		key = after
	} else if kerr == nil && err == nil {
		return "", "", errors.New("the file changed while it was digested")
	}
	return digest, key, nil
}

func readerDigest(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
