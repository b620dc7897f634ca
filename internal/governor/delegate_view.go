package governor

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/redact"
)

// JobView is a delegate job as the surfaces return it (the delegate
// tool's structuredContent). Untrusted bytes — the patch and the agent's
// final message — appear only inside Patch and Message, each a fenced
// block from [quarantine.Render] (provenance-tagged, redacted).
type JobView struct {
	SchemaVersion int        `json:"schemaVersion"`
	Job           string     `json:"job"`
	State         string     `json:"state" jsonschema:"running, succeeded, failed, cancelled, tainted, rejected, expired or admitted"`
	Reason        string     `json:"reason,omitempty"`
	Backend       string     `json:"backend"`
	Model         string     `json:"model"`
	Workspace     string     `json:"workspace"`
	Base          string     `json:"base"`
	Budget        job.Budget `json:"budget"`
	// Used are the grant's counters: live while this process runs the
	// job, final once it ended.
	Used *JobUsage `json:"used,omitempty"`
	// Digest is the candidate patch's "sha256:" digest.
	Digest   string       `json:"digest,omitempty"`
	Findings []JobFinding `json:"findings,omitempty"`
	Patch    string       `json:"patch,omitempty"`
	Message  string       `json:"message,omitempty"`
	// Activity is the agent's recent activity lines while the job runs
	// (tool uses with a short summary of their input, text), oldest first:
	// at most [ActivityLines] lines of at most [ActivityLineRunes] runes,
	// redacted with the answer profile, inside one untrusted fenced block
	// (kind "activity"); "" once the job ended.
	Activity string `json:"activity,omitempty"`
	// Checks are the user's configured checks (verify.commands) run on
	// the candidate in the verify profile before it was attached, beside
	// what the agent claimed (Message); each check's output is fenced.
	// A failing check does not fail the job.
	Checks []JobCheck `json:"checks,omitempty"`
	// Verification summarizes Checks in plain text, or says why none ran
	// ("no checks configured", …); it carries no untrusted bytes.
	Verification string `json:"verification,omitempty"`
	// Admit says how the user admits the candidate; no tool does.
	Admit string `json:"admit,omitempty"`
}

// JobFinding is one scan finding of the candidate ([quarantine.Finding]):
// Path is the agent's choice, shown as data.
type JobFinding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity" jsonschema:"warn or block (block taints the candidate)"`
	Path     string `json:"path"`
	Line     int    `json:"line,omitempty"`
	Message  string `json:"message"`
}

// JobUsage are the job's grant counters: requests, tokens and spend in
// USD, and the grant's final state.
type JobUsage struct {
	Requests   int64   `json:"requests"`
	Tokens     int64   `json:"tokens"`
	USD        float64 `json:"usd"`
	GrantState string  `json:"grant_state"`
}

// JobStatus returns job id of workspace ws. A job of another workspace is
// INVALID_INPUT job.unknown, like an unknown one. A job this process runs
// is reported ended only once its result is stored (waiting at most
// statusSettle): its row can end first, when a quarantine taints it
// during the run.
func (g *Governor) JobStatus(ctx context.Context, ws, id string) (JobView, error) {
	deps, err := g.deps(ctx)
	if err != nil {
		return JobView{}, err
	}
	j, err := deps.Jobs.Get(ctx, id)
	if err == nil && !samePath(j.Workspace, ws) {
		err = job.UnknownError(id) // another workspace's job looks exactly like no job
	}
	if err != nil {
		return JobView{}, err
	}
	if r := g.live.get(id); r != nil && j.State != job.Running {
		// The row can end before this process has stored the job's
		// result: a quarantine during the run taints it at once, and the
		// candidate is attached after the tree ended. The ending is
		// reported once it is whole, so a caller that polls until the
		// state is not running reads the candidate with it.
		if j, err = g.settledJob(ctx, deps, r, j); err != nil {
			return JobView{}, err
		}
	}
	v := view(j, readReceipt(filepath.Join(deps.WorkDir, j.ID, "receipt.json")))
	if r := g.live.get(id); r != nil && j.State == job.Running {
		// Live progress: the grant's counters as the gate meters them.
		if gr, err := deps.Gate.Inspect(ctx, r.grant); err == nil {
			v.Used = usage(gr)
		}
		v.Activity = activityBlock(j.ID, r.activity.recent())
	}
	return v, nil
}

// statusSettle bounds how long a status waits for this process to finish
// a job whose row already ended (storing a quarantined job's candidate
// takes a few git processes; ending its tree is bounded by endWait).
const statusSettle = 10 * time.Second

// settledJob waits (bounded by statusSettle and ctx) until r's runner has
// finished and returns job j as stored then; on the bound it returns j
// as it is.
func (g *Governor) settledJob(ctx context.Context, deps DelegateDeps, r *running, j job.Job) (job.Job, error) {
	t := time.NewTimer(statusSettle)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C:
		return j, nil
	case <-ctx.Done():
		return j, nil
	}
	return deps.Jobs.Get(ctx, j.ID)
}

// activityBlock fences a job's activity lines ("" for none).
func activityBlock(id string, lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return quarantine.Render(quarantine.Fenced{Job: id, Profile: "candidate", Kind: "activity", Body: []byte(strings.Join(lines, "\n"))})
}

func usage(gr gate.Grant) *JobUsage {
	u := gr.Used
	return &JobUsage{Requests: u.Requests, Tokens: u.Tokens, USD: u.Spend.Dollars(), GrantState: string(gr.State)}
}

func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && filepath.Clean(ra) == filepath.Clean(rb)
}

func view(j job.Job, r *Receipt) JobView {
	v := JobView{SchemaVersion: 1, Job: j.ID, State: j.State.String(), Reason: j.Reason, Backend: j.Backend, Model: j.Model,
		Workspace: j.Workspace, Base: j.Base, Budget: j.Budget}
	if r != nil && r.Grant != nil {
		v.Used = usage(*r.Grant)
	}
	if c := j.Candidate; c != nil {
		v.Digest = c.Digest
		// A finding's path is the agent's choice and sits outside the
		// fence: redacted with the answer profile like the fenced patch
		// (a file named after a workspace secret must not carry it out).
		red := redact.NewAnswer()
		for _, f := range c.Findings {
			v.Findings = append(v.Findings, JobFinding{Rule: f.Rule, Severity: f.Severity.String(), Path: oneLine(red.String(f.Path)), Line: f.Line, Message: f.Message})
		}
		if len(c.Patch) > 0 {
			v.Patch = quarantine.Render(quarantine.Fenced{Job: j.ID, Profile: "candidate", Kind: "patch", Body: c.Patch})
		}
		v.Checks, v.Verification = checksView(j.ID, c.Verification)
		if len(c.Message) > 0 {
			v.Message = quarantine.Render(quarantine.Fenced{Job: j.ID, Profile: "candidate", Kind: "message", Body: c.Message})
		}
	}
	if j.State == job.Succeeded || j.State == job.Tainted {
		v.Admit = "Only the user admits a candidate: review it with `coagent8 jobs " + j.ID + "`, then run `coagent8 admit " + j.ID +
			"` (or `coagent8 reject " + j.ID + "`) in a terminal in the workspace; request_admission only asks the user, by an approval form."
	}
	return v
}
