package delegation

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"

	"github.com/coagent8/coagent8/internal/fault"
)

// Runtime is a pinned CLI as the sandbox runs it: the canonical path of
// the file that is executed (symlinks such as node_modules/.bin/claude
// resolved) and its SHA-256.
type Runtime struct {
	// Executable is the canonical absolute path of the executed file.
	Executable string
	// Digest is "sha256:<hex>" of Executable's content.
	Digest string
}

// ResolveRuntime resolves path (e.g. .tools/node_modules/.bin/claude) to
// the file it runs and digests it. Errors are fault.CLINotFound.
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
	return Runtime{Executable: real, Digest: d}, nil
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
