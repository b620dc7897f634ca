package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
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
	s := &Server{}
	factories := map[string]toolFactory{
		"consult": s.consultTool, "review": s.reviewTool, "doctor": s.doctorTool,
		"session": s.sessionTool, "cancel": s.cancelTool, "issue": s.issueTool,
		"delegate": s.delegateTool, "request_admission": s.admissionTool,
	}
	for name, f := range s.aliasTools() {
		factories[name] = f
	}
	handlers := map[string]mcp.ToolHandler{}
	for name, f := range factories {
		_, h := f()
		handlers[name] = h
	}
	_, run := s.runTool(handlers)
	handlers["run"] = run
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
			if c == nil || !slices.Contains(c.Types, "array") || c.Items == nil || c.Items.Properties["reason"] == nil {
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
