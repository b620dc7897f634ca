package governor

import (
	"context"
	"fmt"
	"strings"

	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/verify"
)

// Notes of a verification in which no check ran.
const (
	// NoteNoChecks: the user configured no verify.commands; none is
	// invented.
	NoteNoChecks = "no checks configured (verify.commands in the coagent8 configuration)"
	// NoteNoSandbox: the checks run only in the verify profile, never
	// unsandboxed.
	NoteNoSandbox = "configured checks were not run: this server has no task sandbox"
	// NoteQuarantined: a quarantined job's candidate is not executed.
	NoteQuarantined = "configured checks were not run: the job was quarantined (containment event)"
)

// verifyCandidate runs the user's configured checks (verify.commands,
// read now, as for a review) on job j's candidate — its upper directory
// upper over the workspace — each in the verify profile, and returns
// what they reported. It never fails: a check that cannot run is
// "not_run" with the reason, and when none runs the note says why.
func (g *Governor) verifyCandidate(ctx context.Context, j job.Job, upper string) *job.Verification {
	set, note := g.verifySet()
	switch {
	case note != "":
		return &job.Verification{Note: note}
	case len(set.Commands) == 0:
		return &job.Verification{Note: NoteNoChecks}
	case g.verifier == nil:
		return &job.Verification{Note: NoteNoSandbox}
	}
	return &job.Verification{Checks: g.verifier.RunCandidate(ctx, j.Workspace, upper, set)}
}

// JobCheck is one configured check's result on the candidate, next to
// what the agent claimed ([JobView.Message]). Command, status and exit
// come from the user's configuration and the sandbox; Output is what the
// check printed (the agent's code ran), fenced.
type JobCheck struct {
	// Command is the check as the user would type it ("go test ./...").
	Command string      `json:"command"`
	Kind    verify.Kind `json:"kind" jsonschema:"tests, typecheck or other"`
	Status  string      `json:"status" jsonschema:"passed, failed or not_run (a failing check does not fail the job)"`
	// Exit is the sandbox's exit classification ("exited", "timed_out",
	// …); ExitCode the real exit status when Exit is "exited", else -1.
	Exit       string  `json:"exit,omitempty"`
	ExitCode   int     `json:"exit_code"`
	Signal     string  `json:"signal,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	// Reason says why a check did not run.
	Reason string `json:"reason,omitempty"`
	// Output is the bounded, redacted stdout and stderr tails in one
	// fenced block (profile verify, kind check).
	Output string `json:"output,omitempty"`
	// Receipt is the check's containment receipt (profile "verify").
	Receipt *verify.Receipt `json:"receipt,omitempty"`
}

// checksView renders a candidate's verification for job id: the checks,
// and a plain summary (no untrusted bytes) that says when none ran and
// why. Nil renders nothing (a job stored before checks were recorded).
func checksView(id string, v *job.Verification) ([]JobCheck, string) {
	if v == nil {
		return nil, ""
	}
	if len(v.Checks) == 0 {
		return nil, "Checks on the candidate: " + v.Note + "."
	}
	out := make([]JobCheck, 0, len(v.Checks))
	lines := []string{"Checks on the candidate (verify profile: the candidate read-only, no network), beside what the agent claimed:"}
	for _, c := range v.Checks {
		jc := JobCheck{Command: quarantine.Visible(c.Display()), Kind: c.Kind, Status: string(c.Status), Exit: c.Exit, ExitCode: c.ExitCode,
			Signal: c.Signal, DurationMS: c.DurationMS, Reason: c.Reason, Receipt: c.Receipt}
		if c.Status != verify.NotRun {
			jc.Output = quarantine.RenderCheck(id, c.StdoutTail, c.StderrTail)
		}
		out = append(out, jc)
		lines = append(lines, fmt.Sprintf("- %s: %s", jc.Command, c.Outcome()))
	}
	return out, strings.Join(lines, "\n")
}
