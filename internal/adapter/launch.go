package adapter

import (
	"context"
	"io"

	"github.com/coagent8/coagent8/internal/process"
)

// Containment names what confines a read-only turn's CLI (issue 15 scope
// 8), as the result's "containment" field reports it.
const (
	// ContainmentProfile: the CLI runs on the host under coagent8's
	// process supervision and its own verified read-only profile (seed
	// 000), the contract on every platform.
	ContainmentProfile = "profile"
	// ContainmentKernel: the same verified profile, and the CLI runs in
	// the kernel sandbox's read profile (a read-only projection of the
	// workspace) whose only network is the provider gate, holding only a
	// phantom credential of a per-turn grant.
	ContainmentKernel = "kernel"
)

// Proc is a started CLI as a backend reads it. *process.Proc implements
// it; so does a run inside the kernel sandbox ([Launcher]).
type Proc interface {
	// Stdout is the CLI's standard output; it ends when the CLI exits.
	Stdout() io.Reader
	// Touch records activity for the idle timeout.
	Touch()
	// Kill ends the whole tree now.
	Kill()
	// Wait waits for the CLI to exit: its exit code (-1 if signalled)
	// and why coagent8 ended it, if it did.
	Wait() (code int, why process.End)
	// Ended says how the CLI ended ("exited with status N", "was killed
	// by SIG…"), "" while it runs.
	Ended() string
	// Classify maps a stream error to the turn's error, the
	// supervisor's own reason (cancel, deadline, idle) first.
	Classify(err error) error
}

var _ Proc = (*process.Proc)(nil)

// Refuser is a [Proc] whose supervisor can refuse a run after the CLI's
// last record (the kernel sandbox: a pinned runtime file written during
// the run). A backend that read its answer calls [Refused] after Wait.
type Refuser interface {
	// Refused is the supervisor's refusal of the ended run, nil when
	// there is none or the run has not ended.
	Refused() error
}

// Refused returns p's refusal of its ended run ([Refuser]), nil for a
// Proc that cannot refuse after the fact. Call it after p.Wait; a
// non-nil error discards the answer.
func Refused(p Proc) error {
	if r, ok := p.(Refuser); ok {
		return r.Refused()
	}
	return nil
}

// Launcher starts a backend's CLI for one turn ([Turn.Launcher]). The
// spec is the backend's own (path, argv of its verified profile, cwd =
// the workspace, prompt on stdin); a launcher may move it elsewhere (the
// kernel sandbox) but never changes the argv, so the CLI's startup report
// is verified exactly as on the host.
type Launcher interface {
	// Launch starts s. Errors are *fault.Error and mean nothing ran.
	Launch(ctx context.Context, s process.Spec) (Proc, error)
	// Containment is [ContainmentKernel] or [ContainmentProfile].
	Containment() string
}

// Start starts s with l, or on the host under process supervision when l
// is nil.
func Start(ctx context.Context, l Launcher, s process.Spec) (Proc, error) {
	if l == nil {
		return process.Start(ctx, s)
	}
	return l.Launch(ctx, s)
}
