package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/adapter/agy"
)

// RunArgs is the compact profile's single entry point: action plus the
// union of the fields of the tools it dispatches to. Fields that do not
// belong to the chosen action are rejected by that tool's own schema
// (invalid params), exactly as if it had been called directly.
type RunArgs struct {
	Action string `json:"action" jsonschema:"consult, review, issue, or the deprecated analyze, debug, implement"`
	// consult
	Proposal          string   `json:"proposal,omitempty" jsonschema:"consult: the question, plan or specification"`
	TaskType          string   `json:"task_type,omitempty" jsonschema:"consult: architecture, debug or implementation"`
	ContextFiles      []string `json:"context_files,omitempty" jsonschema:"consult, analyze, implement: workspace-relative files (names only are sent)"`
	FilePaths         []string `json:"file_paths,omitempty" jsonschema:"consult: alias of context_files"`
	SpecificQuestions string   `json:"specific_questions,omitempty" jsonschema:"consult: questions or focus areas"`
	Wait              *bool    `json:"wait,omitempty" jsonschema:"consult: false = run in the background and return the session handle at once"`
	// review
	Scope        string `json:"scope,omitempty" jsonschema:"review: uncommitted (default), staged, a..b, a commit or a base branch"`
	Target       string `json:"target,omitempty" jsonschema:"review: used as the scope when scope is not given"`
	Instructions string `json:"instructions,omitempty" jsonschema:"review: what to focus on"`
	RunChecks    *bool  `json:"run_checks,omitempty" jsonschema:"review: run the user's configured checks (default true when configured); commands cannot be passed"`
	// issue and the deprecated aliases
	ErrorMessage  string `json:"error_message,omitempty" jsonschema:"issue, debug: the error"`
	Context       string `json:"context,omitempty" jsonschema:"issue, debug: what was being done"`
	IncludeDoctor *bool  `json:"include_doctor,omitempty" jsonschema:"issue: include the doctor summary (default true)"`
	Task          string `json:"task,omitempty" jsonschema:"analyze: what to analyse"`
	Specification string `json:"specification,omitempty" jsonschema:"implement: what to implement"`
	TurnFields
}

// runActions are the tools run dispatches to.
var runActions = []string{"consult", "review", "issue", "analyze", "debug", "implement"}

func runSchema(s *jsonschema.Schema) {
	s.Required = []string{"action"}
	enum(s, "action", runActions...)
	enum(s, "task_type", "architecture", "debug", "implementation")
	s.Properties["run_checks"].Type, s.Properties["run_checks"].Types = "boolean", nil
	turnFieldsSchema(s)
}

const runDescription = `One entry point for coagent8's work (compact profile): action consult (ask another local coding agent), ` +
	`review (read-only review of the workspace's Git changes with an enforced READY/BLOCKED verdict) or issue ` +
	`(a sanitized bug report; nothing is sent); analyze, debug and implement are deprecated consult aliases. ` +
	`Pass the fields of the chosen action. Backends run read-only; model choice is governed by the user's rules. ` + agy.Limitation

// runTool builds run over the handlers of the tools it dispatches to. It
// has no outputSchema: its structuredContent is that of the action's tool.
func (s *Server) runTool(handlers map[string]mcp.ToolHandler) (*mcp.Tool, mcp.ToolHandler) {
	in, resolved := schemaFor[RunArgs](runSchema)
	tool := &mcp.Tool{Name: "run", Title: "Run a coagent8 action", Description: runDescription,
		InputSchema: in, Icons: []mcp.Icon{icon()},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)}}
	return tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := decode[RunArgs](req.Params.Arguments, resolved)
		if err != nil {
			return s.inputError(req, err)
		}
		h, ok := handlers[a.Action]
		if !ok {
			return s.inputError(req, invalid("unknown action "+a.Action))
		}
		inner, err := withoutAction(req)
		if err != nil {
			return s.inputError(req, err)
		}
		return h(ctx, inner)
	}
}

// withoutAction returns a copy of req whose arguments lack "action", for
// the dispatched tool's strict decoder. Session, metadata and any input
// responses of the original request are kept.
func withoutAction(req *mcp.CallToolRequest) (*mcp.CallToolRequest, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(req.Params.Arguments, &m); err != nil {
		return nil, invalid("arguments must be a JSON object")
	}
	delete(m, "action")
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, invalid(err.Error())
	}
	params := *req.Params
	params.Arguments = raw
	inner := *req
	inner.Params = &params
	return &inner, nil
}
