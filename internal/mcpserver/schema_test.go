package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEverySchemaResolves calls every tool's handler with an unknown
// argument: input schemas resolve lazily on the first call, so this is
// where a schema that cannot resolve would panic; each must answer
// JSON-RPC invalid params.
func TestEverySchemaResolves(t *testing.T) {
	_, handlers := everyTool(&Server{})
	for name, h := range handlers {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: name, Arguments: json.RawMessage(`{"no_such_argument":1}`)}}
		_, err := h(context.Background(), req)
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: err = %v, want invalid params", name, err)
		}
	}
	if len(handlers) < 10 {
		t.Fatalf("only %d tools checked", len(handlers))
	}
}

// everyTool builds every tool of every profile, the unlisted aliases and
// run included, as register does.
func everyTool(s *Server) (map[string]*mcp.Tool, map[string]mcp.ToolHandler) {
	factories := map[string]toolFactory{
		"consult": s.consultTool, "review": s.reviewTool, "doctor": s.doctorTool,
		"session": s.sessionTool, "cancel": s.cancelTool, "issue": s.issueTool,
		"delegate": s.delegateTool, "request_admission": s.admissionTool,
	}
	for name, f := range s.aliasTools() {
		factories[name] = f
	}
	tools, handlers := map[string]*mcp.Tool{}, map[string]mcp.ToolHandler{}
	for name, f := range factories {
		tools[name], handlers[name] = f()
	}
	tools["run"], handlers["run"] = s.runTool(handlers)
	return tools, handlers
}

// TestContainmentInOutputSchemas (issue 15 scope 8): every tool whose
// result is a turn outcome declares containment as kernel or profile and
// containmentReason as a string; doctor declares its containment section.
func TestContainmentInOutputSchemas(t *testing.T) {
	s := &Server{}
	tools := map[string]toolFactory{"consult": s.consultTool, "review": s.reviewTool, "doctor": s.doctorTool}
	for name, f := range s.aliasTools() {
		tools[name] = f
	}
	for name, f := range tools {
		tool, _ := f()
		out, ok := tool.OutputSchema.(*jsonschema.Schema)
		if !ok {
			t.Fatalf("%s: output schema %T", name, tool.OutputSchema)
		}
		c := out.Properties["containment"]
		if name == "doctor" {
			// A nullable array: anyOf [array, null] (splitTypeUnions).
			if c == nil || len(c.AnyOf) != 2 || c.AnyOf[0].Type != "array" || c.AnyOf[0].Items == nil ||
				c.AnyOf[0].Items.Properties["reason"] == nil || c.AnyOf[1].Type != "null" {
				t.Errorf("doctor: containment section schema = %+v", c)
			}
			continue
		}
		if _, isTurn := out.Properties["output"]; !isTurn {
			continue // an alias whose result is not a turn outcome
		}
		got := []any(nil)
		if c != nil {
			got = c.Enum
		}
		if want := []any{"kernel", "profile"}; c == nil || c.Type != "string" || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: containment enum = %v, want %v", name, got, want)
		}
		if r := out.Properties["containmentReason"]; r == nil || r.Type != "string" {
			t.Errorf("%s: containmentReason = %+v", name, r)
		}
	}
}
