package operator

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/coagent8/coagent8/internal/admission"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/quarantine"
)

// JobCandidates is the [Candidates] source over the delegate jobs'
// store (internal/job) and the same admitter `coagent8 admit` uses
// (internal/admission): a candidate's id is its job's id, it is admitted
// into the job's own workspace, all or nothing, and a tainted candidate
// is admitted only when the form acknowledged "tainted" — the page shows
// the taint reason beside that checkbox. Safe for concurrent use (the
// store and the admitter are).
type JobCandidates struct {
	jobs  *job.Store
	adm   *admission.Admitter
	actor string
}

var _ Candidates = (*JobCandidates)(nil)

// NewJobCandidates returns the source over jobs and adm; admissions and
// rejections are recorded as by "operator:uid=<uid>".
func NewJobCandidates(jobs *job.Store, adm *admission.Admitter) *JobCandidates {
	return &JobCandidates{jobs: jobs, adm: adm, actor: fmt.Sprintf("operator:uid=%d", os.Getuid())}
}

// List returns every job that has or had a candidate, newest first.
func (c *JobCandidates) List(ctx context.Context) ([]CandidateSummary, error) {
	list, err := c.jobs.List(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []CandidateSummary
	for _, j := range list {
		if j.Candidate != nil || j.State == job.Tainted {
			out = append(out, c.summary(ctx, j))
		}
	}
	return out, nil
}

func (c *JobCandidates) summary(ctx context.Context, j job.Job) CandidateSummary {
	s := CandidateSummary{ID: j.ID, Job: j.ID, State: j.State.String(), Created: j.Created}
	if j.Candidate != nil {
		s.Findings = len(j.Candidate.Findings)
		s.Summary = diffSummary(j.Candidate.Patch)
	}
	if j.State == job.Tainted {
		s.Taint = c.taint(ctx, j)
	}
	return s
}

// Get returns job id's candidate: its patch (untrusted; the page
// redacts and escapes it), findings, provenance, and the acknowledgement
// admission needs.
func (c *JobCandidates) Get(ctx context.Context, id string) (Candidate, error) {
	j, err := c.jobs.Get(ctx, id)
	if err != nil {
		return Candidate{}, err
	}
	out := Candidate{CandidateSummary: c.summary(ctx, j), Provenance: map[string]string{
		"workspace": j.Workspace, "base": j.Base, "backend": j.Backend, "model": j.Model, "reason": j.Reason}}
	if cd := j.Candidate; cd != nil {
		out.Digest, out.Diff = cd.Digest, string(cd.Patch)
		out.Provenance["digest"] = cd.Digest
		for _, f := range cd.Findings {
			out.Findings = append(out.Findings, Finding{Severity: f.Severity.String(), Rule: f.Rule, File: f.Path, Line: f.Line, Message: f.Message})
		}
		out.Checks = checks(cd.Verification)
	}
	if j.State == job.Tainted {
		out.Acknowledge = []string{admission.AckTainted}
	}
	return out, nil
}

// taint says why job j is tainted: its blocking findings, or the
// quarantine's trigger and revoked grants.
func (c *JobCandidates) taint(ctx context.Context, j job.Job) string {
	if ev, ok, _ := c.jobs.QuarantineEvidence(ctx, j.ID); ok && j.Reason == job.ReasonQuarantined {
		return fmt.Sprintf("%s: quarantined (trigger %s, by %s), %d grant(s) revoked", j.Reason, ev.Trigger, ev.Actor, len(ev.RevokedGrants))
	}
	var block []string
	if j.Candidate != nil {
		for _, f := range j.Candidate.Findings {
			if f.Severity == quarantine.Block {
				block = append(block, f.Rule+" in "+f.Path)
			}
		}
	}
	if len(block) > 0 {
		return fmt.Sprintf("%s: blocking finding(s): %s", j.Reason, strings.Join(block, "; "))
	}
	return j.Reason
}

// ReasonCandidateChanged refuses an admission whose candidate is not the
// one the operator was shown (POLICY_DENIED; the reason the MCP
// admission form's check uses too, governor.ReasonAdmissionMoved).
const ReasonCandidateChanged = "admission.digest_changed"

// Admit admits job id's candidate into the job's workspace if its digest
// is digest, the one the operator was shown: a job quarantined while it
// ran is listed with no patch, and its agent's patch can be attached
// after the page was shown; a candidate's digest never changes once set
// ([job.Store.Attach]). ack are the reasons the operator acknowledged.
// Errors are POLICY_DENIED [ReasonCandidateChanged], admission's and the
// job store's typed errors.
func (c *JobCandidates) Admit(ctx context.Context, id, digest string, ack []string) error {
	j, err := c.jobs.Get(ctx, id)
	if err != nil {
		return err
	}
	if j.Candidate != nil && j.Candidate.Digest != digest {
		return fault.New(fault.PolicyDenied, ReasonCandidateChanged,
			"The candidate was not admitted: it is not the one this page showed (it changed after the page was loaded). Review it again.").With("job", id)
	}
	_, err = c.adm.Admit(ctx, admission.Request{Job: id, Workspace: j.Workspace, Actor: c.actor, Ack: ack})
	return err
}

// Reject discards job id's candidate.
func (c *JobCandidates) Reject(ctx context.Context, id string) error {
	j, err := c.jobs.Get(ctx, id)
	if err != nil {
		return err
	}
	return c.adm.Reject(ctx, id, j.Workspace, c.actor)
}

// diffSummary counts a patch's files and added and removed lines:
// "2 files, +5 −1".
func diffSummary(patch []byte) string {
	var files, add, del int
	for line := range bytes.SplitSeq(patch, []byte("\n")) {
		switch {
		case bytes.HasPrefix(line, []byte("diff --git ")):
			files++
		case bytes.HasPrefix(line, []byte("+++ ")), bytes.HasPrefix(line, []byte("--- ")):
		case bytes.HasPrefix(line, []byte("+")):
			add++
		case bytes.HasPrefix(line, []byte("-")):
			del++
		}
	}
	return fmt.Sprintf("%d file(s), +%d −%d", files, add, del)
}

// checks are the user's checks run on the candidate in the verify profile
// (issue 16 scope 4), with their real exit statuses; a check that did not
// run shows its status with exit -1 and why. None when no check ran.
func checks(v *job.Verification) []Check {
	if v == nil {
		return nil
	}
	out := make([]Check, 0, len(v.Checks))
	for _, c := range v.Checks {
		status := string(c.Status)
		switch {
		case c.Reason != "":
			status += ": " + c.Reason
		case c.Exit != "" && c.Exit != "exited":
			status += " (" + c.Exit + ")"
		}
		out = append(out, Check{Command: strings.Join(c.Command, " "), Status: status, Exit: c.ExitCode})
	}
	return out
}
