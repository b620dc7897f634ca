package candidate

import (
	"fmt"

	"github.com/coagent8/coagent8/internal/fault"
)

// Reasons of the typed errors of this package (fault.Error.Reason).
const (
	ReasonNotDirectory   = "candidate.not_directory"
	ReasonSpecialFile    = "candidate.special_file"
	ReasonOverlayXattr   = "candidate.overlay_xattr"
	ReasonChanged        = "candidate.changed_during_walk"
	ReasonTooManyEntries = "candidate.too_many_entries"
	ReasonTooDeep        = "candidate.too_deep"
	ReasonRead           = "candidate.read"
	ReasonUnsupported    = "candidate.unsupported_platform"
)

// pathError returns a typed error naming the workspace-relative path rel
// (never an absolute host path) in its message, quoted because the agent
// chose the name, and in Details["path"].
func pathError(code fault.Code, reason, what, rel string, cause error) *fault.Error {
	return fault.Wrap(code, reason, fmt.Sprintf("candidate workspace: %s: %q", what, display(rel)), cause).With("path", display(rel))
}

// display returns rel for messages: "." for the root.
func display(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}
