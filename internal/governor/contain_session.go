package governor

import (
	"strings"

	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/turn"
)

// ReasonKernelSessionUnavailable refuses a continued session whose CLI
// session lives in the kernel read profile when that profile is not
// available now (fault.SandboxUnavailable): it never continues on the
// host, where the CLI does not know the session.
const ReasonKernelSessionUnavailable = "session.kernel_unavailable"

// containContinued reports whether treq, a continuation of a named
// Claude Code session, runs on the host: its first turn ran there (no
// read-profile state is kept under its handle). A session with kept
// state continues in the read profile (false). A session_mode auto turn
// learns its session only once the lease is held: the launcher decides
// then ([delegation.ReadLauncher.Bind]).
func (g *Governor) containContinued(treq *turn.Request) (bool, error) {
	if treq.Backend != "claude" || treq.SessionHandle == "" {
		return false, nil
	}
	if delegation.HasSessionState(g.env.StateDir(), treq.SessionHandle) {
		return false, nil
	}
	treq.ContainmentReason = delegation.HostSessionReason
	return true, nil
}

// kernelSessionUnavailable is the refusal of a named session kept in the
// read profile when the read profile is unavailable (reason says why),
// nil for any other turn.
func (g *Governor) kernelSessionUnavailable(treq *turn.Request, reason string) error {
	if treq.Backend != "claude" || treq.SessionHandle == "" {
		return nil
	}
	return fault.New(fault.SandboxUnavailable, ReasonKernelSessionUnavailable,
		"this session's CLI session lives in coagent8's kernel sandbox (its first turn ran there), which is unavailable now: "+reason+
			"; it is not continued on the host, whose CLI does not know it")
}

// reused reports whether treq may continue a session the store picks
// once the lease is held (session_mode auto without a handle).
func reused(treq *turn.Request) bool {
	return treq.SessionHandle == "" && strings.EqualFold(treq.SessionMode, "auto")
}

// bindSession tells l the session and turn once the lease is held, so
// the CLI session is kept under the handle (and given back to its next
// turn), before any other Started hook.
func bindSession(treq *turn.Request, l *delegation.ReadLauncher) {
	next := treq.Started
	treq.Started = func(handle string, n int) {
		l.Bind(handle, n)
		if next != nil {
			next(handle, n)
		}
	}
}
