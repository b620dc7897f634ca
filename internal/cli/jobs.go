package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/admission"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/store"
)

// newJobsCmd is `coagent8 jobs [JOB]` (issue 16 scope 6): the delegate
// jobs in the state directory, as a JSON array; with JOB, that job with
// its findings and its candidate patch inside a fenced, redacted block.
func newJobsCmd(a *app) *cobra.Command {
	var workspace string
	c := &cobra.Command{
		Use:   "jobs [JOB]",
		Short: "List delegate jobs (state, findings, admission), or show one job's quarantined candidate",
		Args:  optionalArgs("JOB"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withJobs(cmd.Context(), func(jobs *job.Store, _ *admission.Admitter) error {
				if len(args) == 1 {
					return a.showJob(cmd.Context(), jobs, args[0])
				}
				return a.listJobs(cmd.Context(), jobs, workspace)
			})
		},
	}
	c.Flags().StringVar(&workspace, "workspace", "", "only jobs of this workspace (a relative path is taken from the current directory; default: all)")
	return c
}

// withJobs opens the state database, the job store (which fails jobs
// whose supervisor died) and the admitter (which finishes or discards an
// interrupted admission), runs f and closes them.
func (a *app) withJobs(ctx context.Context, f func(*job.Store, *admission.Admitter) error) error {
	path := filepath.Join(a.env.StateDir(), "state.db")
	db, err := store.Open(ctx, path, sessionBusy)
	if err != nil {
		return a.startError(path, err)
	}
	defer db.Close()
	jobs, err := job.Open(ctx, db)
	if err != nil {
		return a.startError(path, err)
	}
	events, closeEvents := a.eventSink(a.logger())
	defer closeEvents()
	adm, err := admission.New(ctx, admission.Options{Jobs: jobs, Env: a.env, StateDir: a.env.StateDir(), Events: events})
	if err != nil {
		return a.startError(path, err)
	}
	return f(jobs, adm)
}

// jobLine is one job as `coagent8 jobs` prints it; it carries no
// untrusted bytes.
type jobLine struct {
	ID             string     `json:"id"`
	State          string     `json:"state"`
	Reason         string     `json:"reason,omitempty"`
	Workspace      string     `json:"workspace"`
	Base           string     `json:"base"`
	Backend        string     `json:"backend"`
	Model          string     `json:"model"`
	Budget         job.Budget `json:"budget"`
	Created        time.Time  `json:"created"`
	Expires        time.Time  `json:"expires"`
	Digest         string     `json:"digest,omitempty"`
	Findings       int        `json:"findings"`
	Blocking       int        `json:"blocking_findings"`
	AdmittedBy     string     `json:"admitted_by,omitempty"`
	AdmittedDigest string     `json:"admitted_digest,omitempty"`
	// Checks are the user's checks on the candidate (verify profile):
	// command, status and real exit; their output is shown fenced by
	// `jobs show`. ChecksNote says why none ran.
	Checks     []checkLine `json:"checks,omitempty"`
	ChecksNote string      `json:"checks_note,omitempty"`
}

// checkLine is one check's outcome on a candidate (no output).
type checkLine struct {
	Command  string `json:"command"`
	Status   string `json:"status"`
	Exit     string `json:"exit,omitempty"`
	ExitCode int    `json:"exit_code"`
	Reason   string `json:"reason,omitempty"`
}

func lineOf(j job.Job) jobLine {
	l := jobLine{ID: j.ID, State: j.State.String(), Reason: j.Reason, Workspace: j.Workspace, Base: j.Base,
		Backend: j.Backend, Model: j.Model, Budget: j.Budget, Created: j.Created.UTC(), Expires: j.Expires.UTC(),
		AdmittedBy: j.AdmittedBy, AdmittedDigest: j.AdmittedDigest}
	if c := j.Candidate; c != nil {
		l.Digest, l.Findings = c.Digest, len(c.Findings)
		if v := c.Verification; v != nil {
			l.ChecksNote = v.Note
			for _, ch := range v.Checks {
				l.Checks = append(l.Checks, checkLine{Command: quarantine.Visible(ch.Display()), Status: string(ch.Status), Exit: ch.Exit, ExitCode: ch.ExitCode, Reason: ch.Reason})
			}
		}
		for _, f := range c.Findings {
			if f.Severity == quarantine.Block {
				l.Blocking++
			}
		}
	}
	return l
}

func (a *app) listJobs(ctx context.Context, jobs *job.Store, workspace string) error {
	// Jobs record absolute workspaces: a relative filter matched nothing
	// and printed [] as if there were no jobs (issue 18 item 6).
	if workspace != "" {
		abs, err := a.absWorkspace(workspace)
		if err != nil {
			return err
		}
		workspace = abs
		// Jobs record it with symlinks resolved (turn.Workspace), as admit
		// compares it: a checkout named through a symlink, or `.` in a
		// shell whose current directory is one (os.Getwd keeps $PWD),
		// matched nothing. A deleted checkout keeps the path as given.
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			workspace = real
		}
	}
	list, err := jobs.List(ctx, workspace)
	if err != nil {
		return err
	}
	// A workspace that does not exist and that no job names is a typo,
	// not "no jobs"; a deleted checkout's jobs are still listed.
	if _, serr := os.Stat(workspace); workspace != "" && len(list) == 0 && errors.Is(serr, fs.ErrNotExist) {
		return fault.New(fault.InvalidInput, "workspace.unknown",
			fmt.Sprintf("--workspace '%s' does not exist and no job names it; `coagent8 jobs` lists every job", workspace)).With("flag", "workspace")
	}
	out := []jobLine{}
	for _, j := range list {
		out = append(out, lineOf(j))
	}
	return a.printJSON(out)
}

// showJob prints the job, its findings (as data) and its patch and final
// message inside fenced blocks redacted with the answer profile.
func (a *app) showJob(ctx context.Context, jobs *job.Store, id string) error {
	j, err := jobs.Get(ctx, id)
	if err != nil {
		return err
	}
	findings := []quarantine.Finding{} // [] rather than null without findings
	if j.Candidate != nil {
		findings = append(findings, j.Candidate.Findings...)
	}
	if err := a.printJSON(struct {
		jobLine
		Findings []quarantine.Finding `json:"finding_list"`
	}{lineOf(j), findings}); err != nil {
		return err
	}
	// The agent's recent activity lines, as the supervising process stored
	// them (redacted, escaped); still the agent's text, so fenced.
	if lines := governor.ReadActivity(filepath.Join(a.env.StateDir(), "jobs", j.ID)); len(lines) > 0 {
		fmt.Fprint(a.io.Out, quarantine.Render(quarantine.Fenced{Job: j.ID, Profile: "candidate", Kind: "activity", Body: []byte(strings.Join(lines, "\n"))}))
	}
	if c := j.Candidate; c != nil {
		for _, b := range []quarantine.Fenced{{Job: j.ID, Profile: "candidate", Kind: "patch", Body: c.Patch},
			{Job: j.ID, Profile: "candidate", Kind: "message", Body: c.Message}} {
			if len(b.Body) > 0 {
				fmt.Fprint(a.io.Out, quarantine.Render(b))
			}
		}
		if v := c.Verification; v != nil {
			for _, ch := range v.Checks {
				if ch.Receipt != nil {
					fmt.Fprint(a.io.Out, quarantine.RenderCheck(j.ID, ch.StdoutTail, ch.StderrTail))
				}
			}
		}
	}
	return nil
}

// terminalActor names the person at this terminal for the admission record.
func terminalActor() string { return fmt.Sprintf("terminal:uid=%d", os.Getuid()) }
