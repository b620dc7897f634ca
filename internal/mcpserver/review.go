package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/adapter/agy"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/turn"
)

// ReviewArgs are the review tool's arguments (contract.md §1, §4). Like
// consult, nothing here can select a profile or pass CLI flags:
// a review always runs read-only.
type ReviewArgs struct {
	Scope           string `json:"scope,omitempty" jsonschema:"what to review: uncommitted (default: staged, unstaged and untracked changes), staged, a range a..b, a commit (sha, HEAD~N, commit:<rev>) or a base branch (diff <branch>...HEAD)"`
	Target          string `json:"target,omitempty" jsonschema:"used as the scope when scope is not given"`
	Instructions    string `json:"instructions,omitempty" jsonschema:"what to focus on (default: Review correctness, security, edge cases and architecture.)"`
	Backend         string `json:"backend,omitempty" jsonschema:"auto, claude, codex or agy (gemini is an alias of agy)"`
	WorkspacePath   string `json:"workspace_path" jsonschema:"absolute path of the Git work tree to review"`
	Model           string `json:"model,omitempty" jsonschema:"model id; omitted = the backend's default (still governed)"`
	ReasoningEffort string `json:"reasoning_effort,omitempty" jsonschema:"none, minimal, low, medium, high, xhigh or max"`
	SessionHandle   string `json:"session_handle,omitempty" jsonschema:"continue this coagent8 session"`
	SessionMode     string `json:"session_mode,omitempty" jsonschema:"new (default), auto (reuse a recent idle session of this workspace and backend) or none (keep no history)"`
	TimeoutMS       int64  `json:"timeout_ms,omitempty" jsonschema:"absolute deadline in milliseconds (100..1800000, default 900000)"`
	RunChecks       *bool  `json:"run_checks,omitempty" jsonschema:"run the checks the user configured (verify.commands) in the task sandbox; default true when configured. Only switches them off: commands cannot be passed"`
}

func reviewSchema(s *jsonschema.Schema) {
	s.Required = []string{"workspace_path"}
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
// the State Envelope gate, plus the structured review and the checks that
// really ran ([governor.ReviewOutcome]).
type ReviewOutcome = governor.ReviewOutcome

// ReviewData is the gated review ([governor.ReviewData]).
type ReviewData = governor.ReviewData

// ReviewScope describes the collected Git snapshot (contract.md §4;
// [governor.ReviewScope]).
type ReviewScope = governor.ReviewScope

const reviewDescription = `Independent read-only code review of the workspace's Git changes by another local coding agent ` +
	`(Claude Code, Codex or agy). The server enforces the verdict: any P1/P2 finding, partial coverage, a truncated ` +
	`answer or a missing or malformed State Envelope is BLOCKED; only a complete review with no blocker is READY. ` +
	`Returns the verdict, reason and findings (severity, file, line, problem, evidence, fix) as structuredContent. ` +
	`Checks the user configured (verify.commands) run in coagent8's task sandbox on a copy of the workspace and are reported ` +
	`with their real exit status next to the model's CHECKS claims; a failing check blocks READY. ` +
	`Model choice is governed by the user's rules. ` + agy.Limitation

func (s *Server) reviewTool() (*mcp.Tool, mcp.ToolHandler) {
	in, resolved := schemaFor[ReviewArgs](reviewSchema)
	out := outputSchemaFor[ReviewOutcome]()
	tool := &mcp.Tool{Name: "review", Title: "Review Git changes with another coding agent", Description: reviewDescription,
		InputSchema: in, OutputSchema: out, Icons: []mcp.Icon{icon()},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)}}
	return tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := decode[ReviewArgs](req.Params.Arguments, resolved)
		if err != nil {
			return s.inputError(req, err)
		}
		return s.review(ctx, req, args)
	}
}

// review translates the call into a governed review (Git scope, the
// user's checks, the turn through the same governed path as consult, the
// State Envelope gate; see [governor.Governor.Review]). Every failure is
// BLOCKED with the error's public message as the reason (contract.md §3).
func (s *Server) review(ctx context.Context, req *mcp.CallToolRequest, a ReviewArgs) (*mcp.CallToolResult, error) {
	treq := turn.Request{Backend: a.Backend, Workspace: a.WorkspacePath, Model: a.Model, Effort: a.ReasoningEffort,
		SessionHandle: a.SessionHandle, SessionMode: a.SessionMode, Timeout: time.Duration(a.TimeoutMS) * time.Millisecond}
	scope := a.Scope
	if scope == "" {
		scope = a.Target
	}
	ask := s.consent.Elicitation(req)
	res := s.gov.Review(ctx, governor.ReviewTurn{Turn: s.governed(ctx, req, treq, ask), Scope: scope,
		Instructions: a.Instructions, Number: s.state.nextReview(a.SessionHandle), RunChecks: a.RunChecks})
	if res.Pending {
		return ask.Pending(), nil
	}
	return s.renderReview(res.Outcome), nil
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
