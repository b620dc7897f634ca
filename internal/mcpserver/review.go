package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/adapter/agy"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gitscope"
	"github.com/coagent8/coagent8/internal/review"
	"github.com/coagent8/coagent8/internal/turn"
	"github.com/coagent8/coagent8/internal/verify"
)

// ReviewArgs are the review tool's arguments (contract.md §1, §4). Like
// consult, nothing here can select a profile or pass CLI flags:
// a review always runs read-only.
type ReviewArgs struct {
	Scope           string `json:"scope,omitempty" jsonschema:"what to review: uncommitted (default: staged, unstaged and untracked changes), staged, a range a..b, a commit (sha, HEAD~N, commit:<rev>) or a base branch (diff <branch>...HEAD)"`
	Target          string `json:"target,omitempty" jsonschema:"used as the scope when scope is not given"`
	Instructions    string `json:"instructions,omitempty" jsonschema:"what to focus on (default: Review correctness, security, edge cases and architecture.)"`
	Backend         string `json:"backend,omitempty" jsonschema:"auto, claude, codex or agy (gemini is an alias of agy)"`
	WorkspacePath   string `json:"workspace_path,omitempty" jsonschema:"absolute path of the Git work tree to review (required)"`
	Model           string `json:"model,omitempty" jsonschema:"model id; omitted = the backend's default (still governed)"`
	ReasoningEffort string `json:"reasoning_effort,omitempty" jsonschema:"none, minimal, low, medium, high, xhigh or max"`
	SessionHandle   string `json:"session_handle,omitempty" jsonschema:"continue this coagent8 session"`
	SessionMode     string `json:"session_mode,omitempty" jsonschema:"new (default), auto (reuse a recent idle session of this workspace and backend) or none (keep no history)"`
	TimeoutMS       int64  `json:"timeout_ms,omitempty" jsonschema:"absolute deadline in milliseconds (100..1800000, default 900000)"`
	RunChecks       *bool  `json:"run_checks,omitempty" jsonschema:"run the checks the user configured (verify.commands) in the task sandbox; default true when configured. Only switches them off: commands cannot be passed"`
}

func reviewSchema(s *jsonschema.Schema) {
	nonEmpty(s, "scope", "target", "session_handle", "workspace_path", "model")
	enum(s, "backend", "auto", "claude", "codex", "agy", "gemini")
	enum(s, "reasoning_effort", "none", "minimal", "low", "medium", "high", "xhigh", "max")
	enum(s, "session_mode", "new", "auto", "none")
	s.Properties["timeout_ms"].Minimum = ptr(100.0)
	s.Properties["timeout_ms"].Maximum = ptr(1_800_000.0)
	// A boolean only (not null, not a list): commands come from the user's
	// configuration alone.
	s.Properties["run_checks"].Type, s.Properties["run_checks"].Types = "boolean", nil
}

// ReviewOutcome is the review tool's structuredContent: the execution
// result of contract.md §2 with verdict READY|BLOCKED and reason set by
// the State Envelope gate, plus the structured review.
type ReviewOutcome struct {
	turn.Outcome
	Review ReviewData `json:"review"`
	// Checks are the user's configured checks as they really ran in the
	// task sandbox (issue 8); absent when none ran.
	Checks []verify.Check `json:"checks,omitempty"`
}

// ReviewData is the gated review: the verdict the server enforced, the
// envelope the model reported (findings with severity, file, line,
// problem, evidence, fix) and the Git scope that was sent.
type ReviewData struct {
	review.Result
	// Scope is what was reviewed; nil when collection failed.
	Scope *ReviewScope `json:"scope,omitempty"`
}

// ReviewScope describes the collected Git snapshot (contract.md §4).
type ReviewScope struct {
	Description string `json:"description"`
	// Commit is the snapshot commit ("" when the repository has none yet).
	Commit string `json:"commit"`
	// Base is the merge base an uncommitted scope compared against.
	Base       string   `json:"base,omitempty"`
	Incomplete bool     `json:"incomplete"`
	Binary     []string `json:"binary,omitempty"`
	Omitted    []string `json:"omitted,omitempty"`
}

const reviewDescription = `Independent read-only code review of the workspace's Git changes by another local coding agent ` +
	`(Claude Code, Codex or agy). The server enforces the verdict: any P1/P2 finding, partial coverage, a truncated ` +
	`answer or a missing or malformed State Envelope is BLOCKED; only a complete review with no blocker is READY. ` +
	`Returns the verdict, reason and findings (severity, file, line, problem, evidence, fix) as structuredContent. ` +
	`Checks the user configured (verify.commands) run in coagent8's task sandbox on a copy of the workspace and are reported ` +
	`with their real exit status next to the model's CHECKS claims; a failing check blocks READY. ` +
	`Model choice is governed by the user's rules. ` + agy.Limitation

func (s *Server) reviewTool() (*mcp.Tool, mcp.ToolHandler) {
	in, resolved := schemaFor[ReviewArgs](reviewSchema)
	out, _ := schemaFor[ReviewOutcome](nil)
	tool := &mcp.Tool{Name: "review", Title: "Review Git changes with another coding agent", Description: reviewDescription,
		InputSchema: in, OutputSchema: out, Icons: []mcp.Icon{icon()},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)}}
	return tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := decode[ReviewArgs](req.Params.Arguments, resolved)
		if err != nil {
			return nil, err
		}
		return s.review(ctx, req, args)
	}
}

// review collects the Git scope, runs the turn through the same governed
// path as consult and gates the answer. Every failure is BLOCKED with the
// error's public message as the reason (contract.md §3).
func (s *Server) review(ctx context.Context, req *mcp.CallToolRequest, a ReviewArgs) (*mcp.CallToolResult, error) {
	treq := turn.Request{Backend: a.Backend, Workspace: a.WorkspacePath, Model: a.Model, Effort: a.ReasoningEffort,
		SessionHandle: a.SessionHandle, SessionMode: a.SessionMode, Timeout: time.Duration(a.TimeoutMS) * time.Millisecond}
	prep, err := s.prepareReview(ctx, a)
	if err != nil {
		return s.renderReview(blockedOutcome(s.runner.Failure(treq, err), nil)), nil
	}
	// Backends that enforce a schema (Codex outputSchema) answer in JSON;
	// the others ignore it and the text envelope is the contract.
	treq.Prompt, treq.OutputSchema = prep.Prompt, prep.Schema
	ws, _ := turn.Workspace(a.WorkspacePath) // validated by prepareReview
	checks := s.startChecks(ctx, ws, a.RunChecks)
	out, res := s.governedTurn(ctx, req, treq)
	if res != nil || out.Error != nil {
		// Refused, waiting for input or failed: BLOCKED (or no review)
		// whatever the checks say, so do not keep the caller waiting.
		checks.stop()
		checks = nil
	}
	if res != nil {
		return res, nil
	}
	return s.renderReview(applyChecks(gateOutcome(out, scopeOf(prep.Snapshot)), checks)), nil
}

func (s *Server) prepareReview(ctx context.Context, a ReviewArgs) (review.Request, error) {
	ws, err := turn.Workspace(a.WorkspacePath)
	if err != nil {
		return review.Request{}, err
	}
	scope := a.Scope
	if scope == "" {
		scope = a.Target
	}
	return review.Prepare(ctx, gitscope.Options{Workspace: ws, Scope: scope, Env: s.env}, a.Instructions, s.state.nextReview(a.SessionHandle))
}

// gateOutcome applies the State Envelope gate to a finished turn. An
// execution error is BLOCKED with its message; an empty answer is an
// error, never a clean review (AUD-P2-2).
func gateOutcome(o turn.Outcome, scope *ReviewScope) ReviewOutcome {
	if o.Error != nil {
		return blockedOutcome(o, scope)
	}
	res, err := review.Gate(o.Output, o.Truncated)
	if err != nil {
		fe := fault.From(err)
		o.Status = turn.Failed
		o.Error = &turn.Error{Code: string(fe.Code), Message: fe.Message, Retryable: fe.Retryable, Reason: fe.Reason}
		return blockedOutcome(o, scope)
	}
	o.Output, o.Verdict, o.Reason = res.Text, string(res.Verdict), res.Reason
	if res.Envelope.Findings == nil && (res.Reason == "" || res.Reason == review.ReasonNotReady) {
		// A complete envelope listing no finding reports none; otherwise
		// "no findings parsed" stays null (unknown), never invented.
		res.Envelope.Findings = []review.Finding{}
	}
	if w := snapshotMismatch(res.Envelope.Snapshot, scope); w != "" {
		o.Warnings = append(o.Warnings, w)
	}
	return ReviewOutcome{Outcome: o, Review: ReviewData{Result: res, Scope: scope}}
}

func blockedOutcome(o turn.Outcome, scope *ReviewScope) ReviewOutcome {
	res := review.Result{Verdict: review.Blocked, Truncated: o.Truncated}
	if o.Error != nil {
		res.Reason = o.Error.Message
	}
	o.Verdict, o.Reason = string(res.Verdict), res.Reason
	return ReviewOutcome{Outcome: o, Review: ReviewData{Result: res, Scope: scope}}
}

// snapshotMismatch warns when the model's SNAPSHOT names another commit
// than the one sent (an abbreviated sha of at least 7 digits matches).
func snapshotMismatch(claimed string, scope *ReviewScope) string {
	if scope == nil || scope.Commit == "" || claimed == "" {
		return ""
	}
	if len(claimed) >= 7 && strings.HasPrefix(scope.Commit, strings.ToLower(claimed)) {
		return ""
	}
	return fmt.Sprintf("The review's SNAPSHOT %q is not the reviewed commit %s.", claimed, scope.Commit)
}

func scopeOf(s gitscope.Snapshot) *ReviewScope {
	return &ReviewScope{Description: s.Description, Commit: s.Commit, Base: s.Base, Incomplete: s.Incomplete,
		Binary: s.Binary, Omitted: s.Omitted}
}

// renderReview returns the gated review as structuredContent plus text.
func (s *Server) renderReview(o ReviewOutcome) *mcp.CallToolResult {
	s.state.observe(o.Outcome)
	text := Text(o.Outcome) + fmt.Sprintf("\n> Review: %s", o.Verdict)
	if o.Reason != "" {
		text += " — " + o.Reason
	}
	text += checksText(o.Checks)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: o,
		IsError: o.Error != nil}
}
