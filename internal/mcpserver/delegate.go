package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/consent"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/session"
	"github.com/coagent8/coagent8/internal/turn"
)

// DelegateArgs are the delegate tool's arguments (issue 16 scope 1).
// There is no field that approves, admits or relaxes the sandbox: consent
// comes only from the user's elicitation answer, admission only from the
// user's terminal.
type DelegateArgs struct {
	Action          string          `json:"action,omitempty" jsonschema:"start (default), status or cancel"`
	Task            string          `json:"task,omitempty" jsonschema:"start: what the delegated agent should do"`
	Backend         string          `json:"backend,omitempty" jsonschema:"claude (also auto) or codex (agy is refused as unsupported)"`
	WorkspacePath   string          `json:"workspace_path" jsonschema:"absolute path of the Git work tree's top level"`
	Model           string          `json:"model,omitempty" jsonschema:"model id; omitted = the backend's default (still governed)"`
	ReasoningEffort string          `json:"reasoning_effort,omitempty" jsonschema:"not applied to delegate jobs in this version: omit it (any value is refused INVALID_INPUT delegate.effort_unsupported; the agent runs at the model's default effort)"`
	Budget          *DelegateBudget `json:"budget,omitempty" jsonschema:"start: the job's budget (max_usd required), at most the user's ceilings"`
	Base            string          `json:"base,omitempty" jsonschema:"the state the candidate starts from: HEAD (default; a revision naming HEAD's commit also works; tracked files must be unchanged) or uncommitted (the working tree as it is: tracked changes and untracked files not ignored; the patch is relative to it). Another commit is refused INVALID_INPUT delegate.base_not_head"`
	Wait            *bool           `json:"wait,omitempty" jsonschema:"true = answer when the job has ended; default false (answer at once with the job handle)"`
	Job             string          `json:"job,omitempty" jsonschema:"status, cancel: the job handle"`
}

// DelegateBudget is the budget a caller asks for.
type DelegateBudget struct {
	MaxUSD      float64 `json:"max_usd" jsonschema:"spend budget in US dollars (> 0, at most delegate.maxUSD)"`
	MaxRequests int     `json:"max_requests,omitempty" jsonschema:"model requests (default 200)"`
	MaxMinutes  int     `json:"max_minutes,omitempty" jsonschema:"wall-clock minutes (default and ceiling delegate.maxMinutes)"`
}

func delegateSchema(s *jsonschema.Schema) {
	s.Required = []string{"workspace_path"}
	nonEmpty(s, "workspace_path", "model", "job")
	enum(s, "action", "start", "status", "cancel")
	enum(s, "backend", "auto", "claude", "codex", "agy", "gemini")
	enum(s, "reasoning_effort", "none", "minimal", "low", "medium", "high", "xhigh", "max")
	s.Properties["task"].MaxLength = ptr(governor.MaxTaskBytes)
	b := s.Properties["budget"]
	b.Required = []string{"max_usd"}
	b.Properties["max_requests"].Minimum = ptr(0.0)
	b.Properties["max_minutes"].Minimum = ptr(0.0)
}

const delegateDescription = `Delegate a task to a local coding agent (Claude Code, or Codex with backend codex) that edits a copy of the workspace and runs commands ` +
	`in a sandbox whose only network is the model provider, within a budget the user approves (asked by elicitation; only approve:true starts it). ` +
	`Returns a job handle at once (wait:true to wait); poll with action status, stop with action cancel. ` +
	`The result is a quarantined candidate patch shown only inside an untrusted fenced block; it never changes the checkout: ` +
	`only the user admits it, with coagent8 admit JOB in a terminal.`

func (s *Server) delegateTool() (*mcp.Tool, mcp.ToolHandler) {
	in, resolved := schemaFor[DelegateArgs](delegateSchema)
	out := outputSchemaFor[governor.JobView]()
	out.Required = nil
	tool := &mcp.Tool{Name: "delegate", Title: "Delegate a task to a sandboxed coding agent", Description: delegateDescription,
		InputSchema: in, OutputSchema: out, Icons: []mcp.Icon{icon()},
		// Not destructive: the user's checkout is never written (the
		// candidate is admitted only by the user); open world: the agent
		// reaches the model provider.
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(true)}}
	return tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := decode[DelegateArgs](req.Params.Arguments, resolved)
		if err != nil {
			return s.inputError(req, err)
		}
		v, pending, err := s.delegate(ctx, req, a)
		if pending != nil {
			return pending, nil // the job question as an input request (MCP ≥ 2026-07-28)
		}
		if err != nil {
			return s.toolError(err), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: jobText(v)}}, StructuredContent: v}, nil
	}
}

// delegate serves one delegate call. A non-nil result is the job
// question as an input request (MCP ≥ 2026-07-28), to return unchanged.
func (s *Server) delegate(ctx context.Context, req *mcp.CallToolRequest, a DelegateArgs) (governor.JobView, *mcp.CallToolResult, error) {
	if a.Action == "status" || a.Action == "cancel" {
		if a.Job == "" {
			return governor.JobView{}, nil, fault.New(fault.InvalidInput, "delegate.job_missing", "job is required for "+a.Action+".")
		}
		ws, err := turn.Workspace(a.WorkspacePath)
		if err != nil {
			return governor.JobView{}, nil, err
		}
		v, err := s.gov.JobStatus(ctx, ws, a.Job)
		if a.Action == "cancel" {
			v, err = s.gov.CancelJob(ctx, ws, a.Job)
		}
		return v, nil, err
	}
	var b job.Budget
	if a.Budget != nil {
		b = job.Budget{MaxUSD: a.Budget.MaxUSD, MaxRequests: a.Budget.MaxRequests, MaxMinutes: a.Budget.MaxMinutes}
	}
	wait := a.Wait != nil && *a.Wait
	ask := jobElicitation{req: req, args: a, in: &inputAsk{gate: s.consent}}
	v, err := s.gov.Delegate(ctx, governor.DelegateTask{Task: a.Task, Backend: a.Backend, Workspace: a.WorkspacePath, Model: a.Model,
		Effort: a.ReasoningEffort, Base: a.Base, Budget: b, Consent: ask})
	if errors.Is(err, governor.ErrPending) && ask.in.res != nil {
		return v, ask.in.res, nil
	}
	if err != nil || !wait {
		return v, nil, err
	}
	s.waitJob(ctx, req, v)
	v, err = s.gov.JobStatus(context.WithoutCancel(ctx), v.Workspace, v.Job)
	return v, nil, err
}

// waitJob waits for a job started with wait:true, sending a progress
// notification when the client asked for progress: when the agent's
// latest activity line changed (checked every progressEvery), else a
// heartbeat every heartbeatAfter (hosts that honour progress keep the
// call alive). The activity line is the agent's text, already redacted;
// it is labelled untrusted.
func (s *Server) waitJob(ctx context.Context, req *mcp.CallToolRequest, v governor.JobView) {
	done := make(chan struct{})
	s.guard.Go("delegate wait", func() { defer close(done); s.gov.WaitJob(ctx, v.Job) }, nil)
	var token any
	if req != nil && req.Session != nil && req.Params != nil {
		token = req.Params.GetProgressToken()
	}
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	start, sent, last := time.Now(), time.Now(), ""
	for n := 1.0; ; {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		line := latest(s.gov.JobActivity(v.Job))
		if token == nil || (line == last && time.Since(sent) < heartbeatAfter) {
			continue
		}
		msg := fmt.Sprintf("delegate job %s running for %s", v.Job, time.Since(start).Round(time.Second))
		if line != "" {
			msg += " · agent activity (untrusted): " + line
		}
		msg, _ = s.diag.Bound(msg, progressBytes)
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg})
		n, sent, last = n+1, time.Now(), line
	}
}

// latest is the last of lines, or "".
func latest(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// jobText is the short text rendering: the job's state; the fenced
// blocks are in structuredContent only once, and repeated here so hosts
// that show only text see them, still fenced.
func jobText(v governor.JobView) string {
	t := fmt.Sprintf("Delegate job %s: %s", v.Job, v.State)
	if v.Reason != "" {
		t += " (" + v.Reason + ")"
	}
	t += ". Backend " + v.Backend + ", model " + v.Model + "."
	if u := v.Used; u != nil && v.State == job.Running.String() {
		t += fmt.Sprintf(" Used so far: %d of %d requests, %d tokens, %.4f of %.2f USD.", u.Requests, v.Budget.MaxRequests, u.Tokens, u.USD, v.Budget.MaxUSD)
	}
	if v.Admit != "" {
		t += " " + v.Admit
	}
	for _, b := range []string{v.Activity, v.Patch, v.Message, v.Verification} {
		if b != "" {
			t += "\n\n" + b
		}
	}
	for _, c := range v.Checks {
		if c.Output != "" {
			t += "\n\n" + c.Output
		}
	}
	return t
}

// jobElicitation asks the job question through the tool call's form
// elicitation: elicitation/create before MCP 2026-07-28, an input request
// in the tool result from that revision on ([inputAsk]; the retried call
// must carry the same arguments, and its single-use state, or it is
// refused consent.invalid_state). Only accept with approve === true is
// consent; hosts without form elicitation are refused
// consent.unsupported_client.
type jobElicitation struct {
	req  *mcp.CallToolRequest
	args DelegateArgs // the call's arguments, bound into the request state
	in   *inputAsk
}

func (e jobElicitation) AskJob(ctx context.Context, q governor.JobQuestion) error {
	req := e.req
	if multiRoundTrip(req) && canAskForm(req) {
		res, reason, err := e.in.ask(req, jobInputKey, jobBinding(e.args, q), jobParams(q))
		switch {
		case err != nil:
			return err // governor.ErrPending: nothing starts on this pass
		case reason != "":
			return jobDenied(q, reason, boundWhat(reason))
		}
		return judgeJob(q, res)
	}
	if req == nil || req.Session == nil || !formElicitation(req.Session.InitializeParams()) {
		return jobDenied(q, consent.ReasonUnsupportedClient, "this MCP client cannot show an approval form (no elicitation support)")
	}
	ectx, cancel := context.WithTimeout(ctx, consent.DefaultTimeout)
	defer cancel()
	res, err := req.Session.Elicit(ectx, jobParams(q))
	switch {
	case err != nil && ctx.Err() != nil:
		return jobDenied(q, consent.ReasonAborted, "the call was cancelled while waiting for approval")
	case err != nil && ectx.Err() != nil:
		return jobDenied(q, consent.ReasonTimeout, "the approval request was not answered in time")
	case err != nil:
		return fault.Wrap(fault.PolicyDenied, consent.ReasonFailed, "the delegate job was not started: the approval request failed", err)
	}
	return judgeJob(q, res)
}

// judgeJob returns nil only for accept with approve === true.
func judgeJob(q governor.JobQuestion, res *mcp.ElicitResult) error {
	switch res.Action {
	case "decline":
		return jobDenied(q, consent.ReasonDeclined, "the user declined")
	case "cancel":
		return jobDenied(q, consent.ReasonCancelled, "the approval request was cancelled or dismissed in the host")
	case "accept":
	default:
		return jobDenied(q, consent.ReasonInvalidAnswer, "the answer did not contain approve: true")
	}
	switch approve, ok := res.Content["approve"].(bool); {
	case !ok:
		return jobDenied(q, consent.ReasonInvalidAnswer, "the answer did not contain approve: true")
	case !approve:
		return jobDenied(q, consent.ReasonNotApproved, "the user did not approve")
	}
	return nil
}

func formElicitation(p *mcp.InitializeParams) bool {
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	c := p.Capabilities.Elicitation
	return c.Form != nil || c.URL == nil
}

func jobParams(q governor.JobQuestion) *mcp.ElicitParams {
	schema := map[string]any{"type": "object", "required": []string{"approve"}, "properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Start this delegate job",
			"description": "Choose true to let coagent8 start this one job with this model and budget."},
	}}
	return &mcp.ElicitParams{Mode: "form", Message: q.Message(), RequestedSchema: schema}
}

func jobDenied(q governor.JobQuestion, reason, what string) error {
	way := "; approve it in an MCP host that shows the form, or add " + q.Decision.Model + " to delegate.allowWithoutAsking in the coagent8 configuration"
	if governor.NoWayAround(reason) {
		way = "; nothing was started" // the user's no, or no valid answer: no way around it for the agent
	}
	return fault.New(fault.PolicyDenied, reason, "the delegate job was not started: "+what+way).With("model", q.Decision.Model)
}

// isJob reports whether a session or cancel handle names a delegate job
// (job ids start with "job_", session handles never do).
func isJob(handle string) bool { return strings.HasPrefix(handle, "job_") }

// cancelJob is the cancel tool for a delegate job: the job's tree is
// ended and its grant revoked (governor.CancelJob), in cancel's shape.
func (s *Server) cancelJob(ctx context.Context, ws, id string) (session.Cancelled, error) {
	v, err := s.gov.CancelJob(ctx, ws, id)
	if err != nil {
		return session.Cancelled{}, err
	}
	c := session.Cancelled{SchemaVersion: 1, SessionHandle: id, Cancelled: v.State == job.Cancelled.String()}
	c.Message = "Delegate job " + id + " is " + v.State + "."
	if c.Cancelled {
		c.Message += " Its process tree was ended and its grant revoked."
	}
	return c, nil
}
