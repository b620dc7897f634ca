package turn

import (
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
)

// Workspace validates and canonicalises a workspace path: it must be
// given, absolute, existing and a directory (contract.md §1; AUD-P2-9: no
// silent fallback to the server's cwd). The result has symlinks resolved.
func Workspace(path string) (string, error) {
	if path == "" {
		return "", fault.New(fault.InvalidInput, "workspace.missing",
			"workspace_path is required: pass the absolute path of the project directory.")
	}
	if !filepath.IsAbs(path) {
		return "", fault.New(fault.InvalidInput, "workspace.relative",
			fmt.Sprintf("Validation Error: workspace_path must be absolute: '%s'", path))
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fault.New(fault.InvalidInput, "workspace.not_found",
			fmt.Sprintf("Validation Error: The specified workspace path does not exist: '%s'", path))
	}
	st, err := os.Stat(real)
	if err != nil || !st.IsDir() {
		return "", fault.New(fault.InvalidInput, "workspace.not_directory",
			fmt.Sprintf("Validation Error: The specified workspace path is not a directory: '%s'", path))
	}
	return filepath.Clean(real), nil
}

// Prompt checks the prompt's size and encoding (contract.md §7).
func Prompt(p string) error {
	if len(p) > adapter.MaxPromptBytes {
		return fault.New(fault.InputLimit, "prompt.size", fmt.Sprintf("The prompt is %d bytes of UTF-8, above the limit of %d bytes (%d MiB); shorten it or pass fewer or smaller context files.", len(p), adapter.MaxPromptBytes, adapter.MaxPromptBytes>>20)).
			With("limitBytes", fmt.Sprint(adapter.MaxPromptBytes))
	}
	if !utf8.ValidString(p) {
		return fault.New(fault.InvalidInput, "prompt.encoding", "Prompt is not valid UTF-8.")
	}
	return nil
}
