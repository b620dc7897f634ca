//go:build !(linux && amd64)

package sandbox

import (
	"context"

	"github.com/coagent8/coagent8/internal/fault"
)

// errUnsupported is returned on every platform but Linux/amd64: the task
// sandbox has no implementation there and never runs a command unsandboxed.
func errUnsupported() error {
	return fault.New(fault.Unsupported, "sandbox.platform", "the task sandbox is only available on Linux (amd64)")
}

// MaybeRunChild returns immediately: there are no probes on this platform.
func MaybeRunChild() {}

func currentIdentity() (identity, error) { return identity{}, errUnsupported() }

func (s *Sandbox) runJob(context.Context, job, string) (Receipt, error) {
	return Receipt{}, errUnsupported()
}

func (s *Sandbox) runProbes(context.Context, identity) (*Qualification, error) {
	return nil, errUnsupported()
}

// RunProbe is unsupported on this platform.
func (s *Sandbox) RunProbe(context.Context, string) (ProbeResult, error) {
	return ProbeResult{}, errUnsupported()
}

// ProbeNames returns nil on this platform.
func ProbeNames() []string { return nil }

func (s *Sandbox) hostReady() error { return errUnsupported() }

// hostStillLacks is never reached here (no record matches).
func (q *Qualification) hostStillLacks(context.Context) bool { return false }
