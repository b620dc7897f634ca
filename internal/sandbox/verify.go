package sandbox

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
)

// ProfileVerify is the receipt profile of a check run on a candidate
// ([Sandbox.RunVerify]; seed 001 "verify", issue 15 scope 1, issue 16
// scope 4).
const ProfileVerify = "verify"

// VerifySpec describes one user check run on a delegated job's candidate
// in the verify profile: the task sandbox's boundary (no network at all:
// a fresh network namespace with nothing in it, no gate channel, Landlock
// grants no TCP, the task seccomp filter), with /job/workspace the
// candidate read-only. The view is a read-only overlay whose upper-most
// layer is the candidate's upper directory and whose base is the user's
// workspace, so the check sees the merged tree the agent left (its edits,
// new files and deletions) while nothing it does can change either
// layer; creating it copies nothing. Scratch (HOME) and /tmp are
// writable and disposable. The check tools come only through
// [Spec.ReadOnly], admitted like a review check's (never a wider root).
//
// Spec.Input must be empty (the candidate replaces the input copy) and
// Spec.Dir must be "" (the working directory is the workspace root).
type VerifySpec struct {
	Spec
	// Workspace is the user's workspace the candidate was made from:
	// canonical, absolute, symlink-free. It is never written.
	Workspace string
	// Upper is the candidate's upper directory (a [Candidate]'s
	// Dir/upper after its run): canonical, absolute, symlink-free,
	// disjoint from Workspace, without ',', ':' or '\' (overlayfs option
	// separators). It is never written.
	Upper string
}

// RunVerify is [Sandbox.Run] for the verify profile: the same
// qualification, admission record, limits, cancellation and receipt
// (Profile [ProfileVerify], its own policy digest), on the read-only
// candidate view of spec. Errors as for Run; fault.InvalidInput reason
// "sandbox.verify" for an input copy, a working directory, or a
// workspace or upper directory that is not admissible.
func (s *Sandbox) RunVerify(ctx context.Context, spec VerifySpec) (Receipt, error) {
	j, err := s.admitVerify(spec)
	if err != nil {
		return Receipt{}, s.refuse(err)
	}
	return s.runAdmitted(ctx, j)
}

func (s *Sandbox) admitVerify(spec VerifySpec) (job, error) {
	if spec.Input != "" || spec.Dir != "" {
		return job{}, invalid("sandbox.verify", "a verify run sees the candidate at the workspace root: no input copy, no working directory")
	}
	j, err := s.admit(spec.Spec)
	if err != nil {
		return job{}, err
	}
	ws, err := s.admitRoot(spec.Workspace, true)
	if err != nil || ws == "" {
		return job{}, verifyErr("the candidate's workspace", spec.Workspace, err)
	}
	up, err := s.admitRoot(spec.Upper, true)
	if err != nil || up == "" {
		return job{}, verifyErr("the candidate's upper directory", spec.Upper, err)
	}
	if within(ws, up) || within(up, ws) {
		return job{}, invalid("sandbox.verify", "the candidate's upper directory and the workspace overlap")
	}
	if strings.ContainsAny(up+ws, ",:\\") {
		return job{}, invalid("sandbox.verify", "the candidate's paths contain ',', ':' or '\\'")
	}
	// The verify view is the read profile's read-only workspace
	// projection (idmapped under a root supervisor, a read-only Landlock
	// rule) with the candidate's upper layer stacked on it.
	j.readWS, j.verifyUpper = ws, up
	// A linked worktree's or submodule's git directory, read-only (gitdir.go).
	if j.git, err = s.admitGitDir(ws, "", j.binds); err != nil {
		return job{}, err
	}
	return j, nil
}

// verifyErr names which root was refused (admitRoot's message says
// why), with the verify profile's reason.
func verifyErr(what, p string, err error) error {
	msg := what + " " + strconv.Quote(p) + " is not an admissible directory"
	if fe := (*fault.Error)(nil); errors.As(err, &fe) {
		msg += ": " + fe.Message
	}
	return fault.Wrap(fault.InvalidInput, "sandbox.verify", msg, err)
}
