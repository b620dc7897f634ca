package mcpserver

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/adapter/agy"
	"github.com/coagent8/coagent8/internal/doctor"
)

// DoctorArgs has no fields: doctor always probes every backend.
type DoctorArgs struct{}

const doctorDescription = `Report which backends are installed, their versions, login state (metadata only), ` +
	`whether each read-only profile verified just now, the limits in force, and the MCP servers and plugins agy inherits ` +
	`(agy turns are not isolated from them). Never sends a prompt.`

func (s *Server) doctorTool() (*mcp.Tool, mcp.ToolHandler) {
	in, resolved := schemaFor[DoctorArgs](nil)
	out := outputSchemaFor[doctor.Report]()
	tool := &mcp.Tool{Name: "doctor", Title: "Diagnose coagent8", Description: doctorDescription,
		InputSchema: in, OutputSchema: out, Icons: []mcp.Icon{icon()},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}}
	return tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if _, err := decode[DoctorArgs](req.Params.Arguments, resolved); err != nil {
			return s.inputError(req, err)
		}
		rep := s.Doctor(ctx)
		text, _ := json.MarshalIndent(rep, "", "  ")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: rep}, nil
	}
}

// Doctor runs the doctor report (also used by `coagent8 doctor`). It
// includes agy's section: the MCP servers and plugins agy inherits, by
// name, with the limitation sentence. The whole report is
// diagnostic-redacted by package doctor.
func (s *Server) Doctor(ctx context.Context) doctor.Report {
	sections, refusal := s.sections(ctx)
	return doctor.Run(ctx, doctor.Options{Env: s.env, Backends: s.runner.Backends(), Default: s.defaultBackend, Sections: sections,
		Refusal: refusal, Containment: s.containment})
}

// containment translates the governor's containment decision per backend
// (issue 15 scope 8) into doctor's section.
func (s *Server) containment(ctx context.Context) []doctor.Containment {
	if s.gov == nil {
		return nil
	}
	var out []doctor.Containment
	for _, c := range s.gov.Containment(ctx) {
		out = append(out, doctor.Containment{Backend: c.Backend, Kind: c.Kind, Reason: c.Reason, ReasonCode: c.ReasonCode})
	}
	return out
}

// sections returns the extra doctor sections contributed by other parts
// plus the agy section when agy is configured, and the configuration's
// refusal (see [Options.DoctorSections]).
func (s *Server) sections(ctx context.Context) (map[string]any, error) {
	out := map[string]any{}
	var refusal error
	if s.doctorSections != nil {
		extra, err := s.doctorSections()
		maps.Copy(out, extra)
		refusal = err
	}
	if b, ok := s.runner.Backend(agy.Name).(*agy.Backend); ok {
		out[agy.Name] = b.Doctor(ctx, "")
	}
	if len(out) == 0 {
		return nil, refusal
	}
	return out, refusal
}
