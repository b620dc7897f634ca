package mcpserver

import (
	"context"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/turn"
)

// TurnFields are the execution fields every turn tool accepts.
type TurnFields struct {
	Backend         string `json:"backend,omitempty" jsonschema:"auto, claude, codex or agy (gemini is an alias of agy)"`
	WorkspacePath   string `json:"workspace_path" jsonschema:"absolute path of the project directory"`
	Model           string `json:"model,omitempty" jsonschema:"model id; omitted = the backend's default (still governed)"`
	ReasoningEffort string `json:"reasoning_effort,omitempty" jsonschema:"none, minimal, low, medium, high, xhigh or max"`
	SessionHandle   string `json:"session_handle,omitempty" jsonschema:"continue this coagent8 session"`
	SessionMode     string `json:"session_mode,omitempty" jsonschema:"new (default), auto or none"`
	TimeoutMS       int64  `json:"timeout_ms,omitempty" jsonschema:"absolute deadline in milliseconds (100..1800000, default 900000)"`
}

func turnFieldsSchema(s *jsonschema.Schema) {
	nonEmpty(s, "session_handle", "workspace_path", "model")
	enum(s, "backend", "auto", "claude", "codex", "agy", "gemini")
	enum(s, "reasoning_effort", "none", "minimal", "low", "medium", "high", "xhigh", "max")
	enum(s, "session_mode", "new", "auto", "none")
	s.Properties["timeout_ms"].Minimum = ptr(100.0)
	s.Properties["timeout_ms"].Maximum = ptr(1_800_000.0)
}

// AnalyzeArgs are the deprecated analyze tool's arguments.
type AnalyzeArgs struct {
	Task         string   `json:"task" jsonschema:"what to analyse"`
	ContextFiles []string `json:"context_files,omitempty" jsonschema:"workspace-relative files the backend should read (names only are sent)"`
	TurnFields
}

// DebugArgs are the deprecated debug tool's arguments.
type DebugArgs struct {
	ErrorMessage string `json:"error_message" jsonschema:"the error or failure to debug"`
	Context      string `json:"context,omitempty" jsonschema:"what was being done, logs, suspicions"`
	TurnFields
}

// ImplementArgs are the deprecated implement tool's arguments. The
// backend still runs read-only: it proposes an implementation.
type ImplementArgs struct {
	Specification string   `json:"specification" jsonschema:"what to implement"`
	ContextFiles  []string `json:"context_files,omitempty" jsonschema:"workspace-relative files the backend should read (names only are sent)"`
	TurnFields
}

// alias is one deprecated tool: consult with a fixed task_type.
type alias struct {
	name, taskType, required, title string
}

// aliases are the deprecated tools (contract.md §1; removal planned v1.1.0).
var aliases = []alias{
	{"analyze", "architecture", "task", "Analyze (deprecated: use consult)"},
	{"debug", "debug", "error_message", "Debug (deprecated: use consult)"},
	{"implement", "implementation", "specification", "Implement (deprecated: use consult)"},
}

// deprecation is the warning every alias result carries.
func (a alias) deprecation() string {
	return "The " + a.name + " tool is deprecated and will be removed in v1.1.0; use consult with task_type \"" + a.taskType + "\"."
}

func (a alias) description() string {
	return "Deprecated alias of consult with task_type " + a.taskType + " (removal planned in v1.1.0). Read-only; same governance as consult."
}

// aliasTools returns the three deprecated tools.
func (s *Server) aliasTools() map[string]toolFactory {
	return map[string]toolFactory{
		"analyze":   func() (*mcp.Tool, mcp.ToolHandler) { return aliasTool[AnalyzeArgs](s, aliases[0]) },
		"debug":     func() (*mcp.Tool, mcp.ToolHandler) { return aliasTool[DebugArgs](s, aliases[1]) },
		"implement": func() (*mcp.Tool, mcp.ToolHandler) { return aliasTool[ImplementArgs](s, aliases[2]) },
	}
}

func aliasTool[T any](s *Server, a alias) (*mcp.Tool, mcp.ToolHandler) {
	in, resolved := schemaFor[T](func(sc *jsonschema.Schema) {
		sc.Required = []string{a.required, "workspace_path"}
		nonEmpty(sc, a.required)
		turnFieldsSchema(sc)
	})
	out := outputSchemaFor[turn.Outcome]()
	tool := &mcp.Tool{Name: a.name, Title: a.title, Description: a.description(),
		InputSchema: in, OutputSchema: out, Icons: []mcp.Icon{icon()},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)}}
	return tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := decode[T](req.Params.Arguments, resolved)
		if err != nil {
			return s.inputError(req, err)
		}
		out, res := s.governedTurn(ctx, req, consultRequest(aliasConsult(any(args), a.taskType)))
		if res != nil {
			return res, nil
		}
		out.Warnings = append(out.Warnings, a.deprecation())
		return s.render(out), nil
	}
}

// aliasConsult maps an alias's arguments to consult's.
func aliasConsult(args any, taskType string) ConsultArgs {
	var c ConsultArgs
	var f TurnFields
	switch a := args.(type) {
	case AnalyzeArgs:
		c.Proposal, c.ContextFiles, f = a.Task, a.ContextFiles, a.TurnFields
	case DebugArgs:
		c.Proposal, f = a.ErrorMessage, a.TurnFields
		if ctx := strings.TrimSpace(a.Context); ctx != "" {
			c.Proposal += "\n\nCONTEXT:\n" + ctx
		}
	case ImplementArgs:
		c.Proposal, c.ContextFiles, f = a.Specification, a.ContextFiles, a.TurnFields
	}
	c.TaskType = taskType
	c.Backend, c.WorkspacePath, c.Model, c.ReasoningEffort = f.Backend, f.WorkspacePath, f.Model, f.ReasoningEffort
	c.SessionHandle, c.SessionMode, c.TimeoutMS = f.SessionHandle, f.SessionMode, f.TimeoutMS
	return c
}

// consultRequest builds the turn request of a consult call.
func consultRequest(a ConsultArgs) turn.Request {
	files := append(append([]string(nil), a.ContextFiles...), a.FilePaths...)
	return turn.Request{
		Backend:       a.Backend,
		Prompt:        turn.ConsultPrompt(turn.ConsultInput{Proposal: a.Proposal, TaskType: a.TaskType, ContextFiles: files, SpecificQuestions: a.SpecificQuestions}),
		ContextFiles:  files,
		Workspace:     a.WorkspacePath,
		Model:         a.Model,
		Effort:        a.ReasoningEffort,
		SessionHandle: a.SessionHandle,
		SessionMode:   a.SessionMode,
		Timeout:       time.Duration(a.TimeoutMS) * time.Millisecond,
	}
}
