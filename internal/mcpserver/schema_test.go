package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

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
