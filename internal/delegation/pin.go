package delegation

import (
	"os"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// runtimePin pins rt's executable in the sandbox ([sandbox.Pin]): the
// file mounted at rt.Executable must be content rt.Digest, checked on the
// very file the sandbox mounts, after the qualification check
// (requireQualified binds rt.Digest to the record), so a file renamed
// over the path in between never runs, and a write into it in place
// after the check (or during the run) refuses the run's result:
// SANDBOX_UNAVAILABLE sandbox.pin_changed naming the file, the receipt
// listing it in pins_changed.
//
// A delegated job whose pin changed fails with that reason; it is not
// tainted. Taint (job.Tainted, a quarantine) answers a containment
// event — something the agent did that the boundary or the gate caught —
// and still offers the candidate for admission once the user
// acknowledges why. A changed pin is no act of the agent (the mount is
// read-only to it): the host's copy of the runtime changed under the
// job, so the candidate is the work of bytes that were never qualified,
// and no acknowledgement makes it qualified. Failing it (no candidate
// attached, nothing offered, the sandbox's refusal event recorded) is
// the stricter answer, and the one scope 5 asks of a changed digest. A
// read-profile consult or review likewise returns the error, never its
// answer ([ReadLauncher]).
func runtimePin(rt Runtime) sandbox.Pin {
	return sandbox.Pin{Path: rt.Executable, Check: func(f *os.File) error { return checkRuntime(f, rt) }}
}

// checkRuntime accepts f when its file key is the one rt's digest was
// taken at (no write since: the 373 MB Claude Code binary is not hashed
// per job), else when its SHA-256 is rt.Digest. Errors:
// fault.SandboxUnavailable delegation.runtime_digest (other content) or
// delegation.runtime_unqualified (unreadable).
func checkRuntime(f *os.File, rt Runtime) error {
	if key, err := fdKey(f); err == nil && rt.key != "" && key == rt.key {
		return nil
	}
	d, err := readerDigest(f)
	if err != nil {
		return unqualified("a readable runtime executable", err)
	}
	if d != rt.Digest {
		return digestErr(d, rt.Digest)
	}
	return nil
}

// Refused is the sandbox's refusal of the run once it ended (nil while
// it runs, or when it ended without one): a refusal that came after the
// CLI's final result — a pinned file written during the run
// (SANDBOX_UNAVAILABLE sandbox.pin_changed) — refuses the answer read
// before it ([adapter.Refuser]).
func (p *sandboxProc) Refused() error {
	select {
	case <-p.done:
	default:
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

var _ adapter.Refuser = (*sandboxProc)(nil)
