package delegation

import (
	"os"

	"github.com/coagent8/coagent8/internal/sandbox"
)

// runtimePin pins rt's executable in the sandbox ([sandbox.Pin]): the
// file mounted at rt.Executable must be content rt.Digest, checked on the
// very file the sandbox mounts, after the qualification check
// (requireQualified binds rt.Digest to the record), so a file renamed
// over the path in between never runs.
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
