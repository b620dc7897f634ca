package mcpserver

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/adapter/agy"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/turn"
)

// ConsultArgs are the consult tool's arguments (contract.md §1). There is
// deliberately no field that selects a profile, passes CLI flags or
// asserts consent.
type ConsultArgs struct {
	Proposal          string   `json:"proposal" jsonschema:"the question, plan or specification to consult on"`
	TaskType          string   `json:"task_type,omitempty" jsonschema:"architecture, debug or implementation"`
	ContextFiles      []string `json:"context_files,omitempty" jsonschema:"workspace-relative files the backend should read (names only are sent)"`
	FilePaths         []string `json:"file_paths,omitempty" jsonschema:"alias of context_files"`
	SpecificQuestions string   `json:"specific_questions,omitempty" jsonschema:"questions or focus areas"`
	Backend           string   `json:"backend,omitempty" jsonschema:"auto, claude, codex or agy (gemini is an alias of agy)"`
	WorkspacePath     string   `json:"workspace_path" jsonschema:"absolute path of the project directory"`
	Model             string   `json:"model,omitempty" jsonschema:"model id; omitted = the backend's default (still governed)"`
	ReasoningEffort   string   `json:"reasoning_effort,omitempty" jsonschema:"none, minimal, low, medium, high, xhigh or max"`
	SessionHandle     string   `json:"session_handle,omitempty" jsonschema:"continue this coagent8 session"`
	SessionMode       string   `json:"session_mode,omitempty" jsonschema:"new (default), auto (reuse a recent idle session of this workspace and backend) or none (keep no history)"`
	TimeoutMS         int64    `json:"timeout_ms,omitempty" jsonschema:"absolute deadline in milliseconds (100..1800000, default 900000)"`
	Wait              *bool    `json:"wait,omitempty" jsonschema:"false = return the session handle at once and run in the background; poll with session status/result, stop with cancel"`
}

func consultSchema(s *jsonschema.Schema) {
	s.Required = []string{"proposal", "workspace_path"}
	nonEmpty(s, "proposal", "session_handle", "workspace_path", "model")
	enum(s, "task_type", "architecture", "debug", "implementation")
	enum(s, "backend", "auto", "claude", "codex", "agy", "gemini")
	enum(s, "reasoning_effort", "none", "minimal", "low", "medium", "high", "xhigh", "max")
	enum(s, "session_mode", "new", "auto", "none")
	s.Properties["timeout_ms"].Minimum = ptr(100.0)
	s.Properties["timeout_ms"].Maximum = ptr(1_800_000.0)
}

const consultDescription = `Consult another local coding agent (Claude Code, Codex or agy) about a proposal, bug or plan. ` +
	`The backend runs read-only: Claude Code and Codex under a profile verified from their own startup reports on every run; ` +
	`agy only with its --sandbox flag. ` + agy.Limitation + ` ` +
	`Model choice is governed by the user's rules; the user may be asked to approve a model. Returns the answer as structuredContent.`

func (s *Server) consultTool() (*mcp.Tool, mcp.ToolHandler) {
	in, resolved := schemaFor[ConsultArgs](consultSchema)
	out := outputSchemaFor[turn.Outcome]()
	tool := &mcp.Tool{Name: "consult", Title: "Consult another coding agent", Description: consultDescription,
		InputSchema: in, OutputSchema: out, Icons: []mcp.Icon{icon()},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)}}
	return tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := decode[ConsultArgs](req.Params.Arguments, resolved)
		if err != nil {
			return s.inputError(req, err)
		}
		return s.consult(ctx, req, args)
	}
}

func (s *Server) consult(ctx context.Context, req *mcp.CallToolRequest, a ConsultArgs) (*mcp.CallToolResult, error) {
	treq := consultRequest(a)
	if a.Wait != nil && !*a.Wait {
		ctx = inBackground(ctx)
	}
	return s.runTurn(ctx, req, treq)
}

// runTurn runs the turn through governedTurn and renders the outcome.
func (s *Server) runTurn(ctx context.Context, req *mcp.CallToolRequest, treq turn.Request) (*mcp.CallToolResult, error) {
	out, res := s.governedTurn(ctx, req, treq)
	if res != nil {
		return res, nil
	}
	return s.render(out), nil
}

// governedTurn runs an MCP turn (consult, the deprecated aliases, run)
// through the one governed path, package governor, with consent asked by
// this call's elicitation. A non-nil *mcp.CallToolResult must be returned
// to the client as is (elicitation input requests); otherwise the Outcome
// (failures included) is the turn's result.
func (s *Server) governedTurn(ctx context.Context, req *mcp.CallToolRequest, treq turn.Request) (turn.Outcome, *mcp.CallToolResult) {
	ask := s.consent.Elicitation(req)
	res := s.gov.Run(ctx, s.governed(ctx, req, treq, ask))
	if res.Pending {
		return turn.Outcome{}, ask.Pending()
	}
	return res.Outcome, nil
}

// governed translates an MCP call into the governor's Turn: its consent,
// wait:false as Background (finished outcomes kept for session result) and
// progress notifications for a foreground run.
func (s *Server) governed(ctx context.Context, req *mcp.CallToolRequest, treq turn.Request, ask governor.Consent) governor.Turn {
	return governor.Turn{Request: treq, Consent: ask, Background: isBackground(ctx), Finished: s.finished,
		Attach: func(r *turn.Request) func() { return s.progress(ctx, req, r) }}
}
