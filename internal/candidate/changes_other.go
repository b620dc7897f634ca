//go:build !linux

package candidate

import "github.com/coagent8/coagent8/internal/fault"

// ChangesLimited reads an overlayfs upper directory; overlayfs is Linux-only,
// so on this platform it always fails with UNSUPPORTED, reason
// [ReasonUnsupported] (source: issue 15 scope 1).
func ChangesLimited(lower, upper string, lim Limits) ([]Change, error) {
	return nil, fault.New(fault.Unsupported, ReasonUnsupported,
		"candidate workspaces need Linux overlayfs")
}
