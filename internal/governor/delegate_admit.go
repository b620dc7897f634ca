package governor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	adm "github.com/coagent8/coagent8/internal/admission"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/redact"
)

// Reasons of [Governor.RequestAdmission]'s own refusals; the consent.*
// reasons of [AdmissionConsent] and the admission.* reasons of
// [admission.Admitter.Admit] pass through.
const (
	// ReasonAdmissionMoved refuses a candidate whose digest changed
	// between the question and the answer (the user approved other bytes).
	ReasonAdmissionMoved = "admission.digest_changed"
	// maxQuestionFiles bounds the file list of the question; the rest is
	// counted.
	maxQuestionFiles = 40
	// maxQuestionFindings bounds the findings listed (hosts show the form's
	// message whole); the rest is counted and the form names where all
	// of them are. Blocking findings are listed first.
	maxQuestionFindings = 200
	// maxQuestionName bounds, in runes, each path (and the taint reason)
	// the question shows: the agent chooses them, and a 4 KiB name
	// padded with spaces would wrap into lines that read like the form's
	// own. The full names are in `coagent8 jobs JOB`.
	maxQuestionName = 200
)

// AdmissionQuestion is what the user is shown before a candidate is
// admitted at the calling agent's request (issue 16 scope 5). Paths,
// finding paths and the taint reason are the agent's choice: redacted
// with the answer profile and control/bidi-escaped.
type AdmissionQuestion struct {
	Job       string
	Workspace string
	// Digest is the "sha256:" digest of exactly the bytes admitted.
	Digest string
	// Files is the diff summary, one entry per file of the patch.
	Files []FileChange
	// Findings are every scan finding of the candidate.
	Findings []JobFinding
	// Taint is the reason the candidate is tainted ("" = not tainted); a
	// tainted candidate is admitted only when the answer acknowledges it.
	Taint string
	// Checks are the verify results (the user's commands, their status
	// and real exit code), or the job's verification summary when none
	// ran; nil when the job has neither.
	Checks []string
}

// FileChange is one file of a patch: its path and added/removed lines.
type FileChange struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// Message is the question's text: job, workspace, digest, the taint
// reason and the checks, then the diff summary and every finding.
func (q AdmissionQuestion) Message() string {
	var b strings.Builder
	fmt.Fprintf(&b, "The calling agent asks you to admit delegate job %s into your checkout %s. "+
		"Admitting writes exactly this patch (digest %s) to the checkout, all or nothing.\n", q.Job, q.WorkspaceText(), q.Digest)
	// The taint and the user's checks come before the file and finding
	// lists, whose length the agent chooses: they must not be pushed
	// below the part of a long form a host shows or a user reads.
	if q.Taint != "" {
		fmt.Fprintf(&b, "TAINTED: %s. Admitting needs the taint acknowledged below.\n", clip(q.Taint))
	}
	for _, c := range q.Checks {
		fmt.Fprintf(&b, "Check: %s\n", c)
	}
	add, rm := 0, 0
	for _, f := range q.Files {
		add, rm = add+f.Added, rm+f.Removed
	}
	fmt.Fprintf(&b, "Files (%d, +%d -%d):\n", len(q.Files), add, rm)
	for i, f := range q.Files {
		if i == maxQuestionFiles {
			fmt.Fprintf(&b, "  … and %d more files\n", len(q.Files)-i)
			break
		}
		fmt.Fprintf(&b, "  %s +%d -%d\n", clip(f.Path), f.Added, f.Removed)
	}
	fmt.Fprintf(&b, "Scan findings (%d):\n", len(q.Findings))
	for i, f := range q.Findings {
		if i == maxQuestionFindings {
			fmt.Fprintf(&b, "  … and %d more findings (all of them: coagent8 jobs %s)\n", len(q.Findings)-i, q.Job)
			break
		}
		fmt.Fprintf(&b, "  [%s] %s %s: %s\n", f.Severity, f.Rule, clip(f.Path), f.Message)
	}
	b.WriteString("Review the full patch with `coagent8 jobs " + q.Job + "` in a terminal. Only approve: true admits.")
	return b.String()
}

// WorkspaceText is the workspace as the question shows it. It is the
// path the calling agent named (delegate's workspace_path), and a
// directory name can hold any byte but "/" and NUL: its line breaks,
// controls and bidi overrides are escaped, so a directory named
// "p\nCheck: all checks passed" cannot add a line that reads as the
// form's own. It is not clipped: the user must see which checkout.
func (q AdmissionQuestion) WorkspaceText() string { return oneLine(q.Workspace) }

// clip cuts s to maxQuestionName runes, marking the cut with "…".
func clip(s string) string {
	if utf8.RuneCountInString(s) <= maxQuestionName {
		return s
	}
	return string([]rune(s)[:maxQuestionName-1]) + "…"
}

// AdmissionAnswer is an approving answer: Ack lists what the user
// acknowledged (admission.AckTainted).
type AdmissionAnswer struct {
	// Actor names who answered (e.g. "mcp-elicitation:client=…"); it is
	// recorded as the admitting actor.
	Actor string
	Ack   []string
}

// AdmissionConsent asks the user whether a candidate may be admitted. MCP
// asks by elicitation; nothing else implements it.
type AdmissionConsent interface {
	// AskAdmission returns the answer only when the user approved q
	// (approve: true); otherwise a POLICY_DENIED *fault.Error with a
	// consent.* or admission.* reason.
	AskAdmission(ctx context.Context, q AdmissionQuestion) (AdmissionAnswer, error)
}

// RequestAdmission shows the user job id's candidate through c and, only
// when the user approves, admits it into ws through the same
// admission.Admitter `coagent8 admit` uses (journaled, all or nothing,
// three-way), recording the answering actor, the admitted digest and the
// admission event. The caller's request itself admits nothing.
//
// Errors: INVALID_INPUT job.unknown (unknown or another workspace's job);
// POLICY_DENIED admission.<state> for a job that is not succeeded or
// tainted (asked nothing); POLICY_DENIED consent.* when the user did not
// approve or could not be asked, admission.taint_unacknowledged,
// admission.digest_changed; then [admission.Admitter.Admit]'s. No failure
// writes to the checkout.
func (g *Governor) RequestAdmission(ctx context.Context, ws, id string, c AdmissionConsent) (adm.Result, error) {
	deps, err := g.deps(ctx)
	if err != nil {
		return adm.Result{}, err
	}
	q, err := g.admissionQuestion(ctx, deps, ws, id)
	if err != nil {
		return adm.Result{}, g.refuseAdmission(id, err)
	}
	ans, err := c.AskAdmission(ctx, q)
	if errors.Is(err, ErrPending) {
		return adm.Result{}, err // asked by input request: not refused (yet)
	}
	if err != nil {
		return adm.Result{}, g.refuseAdmission(id, err)
	}
	if q.Taint != "" && !slices.Contains(ans.Ack, adm.AckTainted) {
		return adm.Result{}, g.refuseAdmission(id, fault.New(fault.PolicyDenied, adm.ReasonUnacknowledged,
			"the candidate was not admitted: it is tainted ("+q.Taint+") and the answer did not acknowledge the taint"))
	}
	// The user approved q.Digest: the admitted bytes must be those.
	if j, err := deps.Jobs.Get(ctx, id); err != nil || j.Candidate == nil || j.Candidate.Digest != q.Digest {
		return adm.Result{}, g.refuseAdmission(id, fault.New(fault.PolicyDenied, ReasonAdmissionMoved,
			"the candidate was not admitted: it changed after the user was asked"))
	}
	a, err := adm.New(ctx, adm.Options{Jobs: deps.Jobs, Env: g.env, StateDir: g.env.StateDir(), Events: g.events})
	if err != nil {
		return adm.Result{}, fault.Wrap(fault.ProcessError, "admission.open", "the admission journal cannot be opened", err)
	}
	return a.Admit(ctx, adm.Request{Job: id, Workspace: q.Workspace, Actor: ans.Actor, Ack: ans.Ack})
}

// admissionQuestion builds the question for job id of ws; a job that is
// not admissible now is refused before anyone is asked.
func (g *Governor) admissionQuestion(ctx context.Context, deps DelegateDeps, ws, id string) (AdmissionQuestion, error) {
	v, err := g.JobStatus(ctx, ws, id)
	if err != nil {
		return AdmissionQuestion{}, err
	}
	j, err := deps.Jobs.Get(ctx, id)
	if err != nil {
		return AdmissionQuestion{}, err
	}
	if j.State != job.Succeeded && j.State != job.Tainted {
		return AdmissionQuestion{}, fault.New(fault.PolicyDenied, "admission."+j.State.String(),
			fmt.Sprintf("Job %s is %s and cannot be admitted; the user was not asked.", j.ID, j.State)).With("job", j.ID)
	}
	if j.Candidate == nil || len(j.Candidate.Patch) == 0 {
		return AdmissionQuestion{}, fault.New(fault.InvalidInput, adm.ReasonNoCandidate, "The job's candidate is empty: there is nothing to admit.")
	}
	q := AdmissionQuestion{Job: j.ID, Workspace: j.Workspace, Digest: j.Candidate.Digest, Files: DiffSummary(j.Candidate.Patch), Findings: v.Findings}
	slices.SortStableFunc(q.Findings, func(a, b JobFinding) int { return blockFirst(a) - blockFirst(b) })
	for _, c := range v.Checks {
		q.Checks = append(q.Checks, fmt.Sprintf("%s: %s (%s, exit code %d)", c.Command, c.Status, c.Exit, c.ExitCode))
	}
	if len(q.Checks) == 0 && v.Verification != "" {
		q.Checks = []string{v.Verification}
	}
	if j.State == job.Tainted {
		q.Taint = oneLine(redact.NewAnswer().String(j.Reason))
	}
	return q, nil
}

func blockFirst(f JobFinding) int {
	if f.Severity == "block" {
		return 0
	}
	return 1
}

// refuseAdmission records the refusal's security event and returns err.
func (g *Governor) refuseAdmission(id string, err error) error {
	fe := fault.From(err)
	e := event.Event{Type: event.TypeRefusal, Code: string(fe.Code), Reason: fe.Reason,
		IDs: map[string]string{"job": id, "actor": "mcp-elicitation"}}
	_ = g.events.Record(e) // a failing sink must not turn a refusal into an admission
	return fe
}

// DiffSummary returns the files of a Git patch with their added and
// removed lines, in patch order. Paths are redacted with the answer
// profile and control/bidi-escaped (they are the agent's choice).
func DiffSummary(patch []byte) []FileChange {
	var out []FileChange
	red := redact.NewAnswer()
	header := false
	for _, line := range bytes.Split(patch, []byte("\n")) {
		s := string(line)
		switch {
		case strings.HasPrefix(s, "diff --git "):
			out = append(out, FileChange{Path: diffName(s)})
			header = true
		case len(out) == 0:
		case header && strings.HasPrefix(s, "@@"):
			header = false
		case header && strings.HasPrefix(s, "+++ ") && s != "+++ /dev/null":
			// git ends a name holding a space with a tab (for patch(1))
			out[len(out)-1].Path = gitName(strings.TrimSuffix(s[4:], "\t"))
		case header && (strings.HasPrefix(s, "rename to ") || strings.HasPrefix(s, "copy to ")):
			_, name, _ := strings.Cut(s, " to ")
			out[len(out)-1].Path = unquoteName(name)
		case header:
		case strings.HasPrefix(s, "+"):
			out[len(out)-1].Added++
		case strings.HasPrefix(s, "-"):
			out[len(out)-1].Removed++
		}
	}
	for i := range out {
		out[i].Path = oneLine(red.String(out[i].Path))
	}
	return out
}

// diffName is the new name of a "diff --git a/X b/Y" line (a fallback
// for sections without a "+++ " header: mode changes, binary files). The
// unquoted form is ambiguous when a name holds " b/" (a binary file
// "x b/README.md" must not be listed as README.md): without a rename the
// two names are equal, so the line is split where they are.
func diffName(s string) string {
	rest := strings.TrimPrefix(s, "diff --git ")
	if n := (len(rest) - 5) / 2; n > 0 && len(rest) == 2*n+5 && rest[:2] == "a/" && rest[2+n:5+n] == " b/" && rest[2:2+n] == rest[5+n:] {
		return rest[5+n:]
	}
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return gitName(rest[i+1:])
	}
	if i := strings.LastIndex(rest, ` "b/`); i >= 0 {
		return gitName(rest[i+1:])
	}
	return rest
}

// unquoteName undoes git's C quoting of a patch name ("\"a\\tb\"").
func unquoteName(name string) string {
	if strings.HasPrefix(name, `"`) {
		if u, err := strconv.Unquote(name); err == nil {
			return u
		}
	}
	return name
}

// gitName strips git's "a/" or "b/" prefix from a (possibly C-quoted)
// patch name.
func gitName(name string) string {
	name = unquoteName(name)
	if len(name) > 2 && (name[:2] == "a/" || name[:2] == "b/") {
		return name[2:]
	}
	return name
}
