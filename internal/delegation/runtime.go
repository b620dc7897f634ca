package delegation

import (
	"crypto/sha256"
	"encoding/hex"
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
	d, err := fileDigest(real)
	if err != nil {
		return Runtime{}, fault.Wrap(fault.CLINotFound, "delegation.runtime", "the delegated CLI cannot be read", err)
	}
	return Runtime{Executable: real, Digest: d, Backend: BackendClaude}, nil
}

func fileDigest(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
