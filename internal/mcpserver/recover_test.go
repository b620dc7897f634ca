package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/redact"
)

// TestRecoveredHandler: a panicking tool handler ends its own call with a
// PROCESS_ERROR internal.panic result, the process goes on, and the log
// has the panic and its stack with credentials redacted; a handler that
// returns is passed through unchanged.
func TestRecoveredHandler(t *testing.T) {
	var logged bytes.Buffer
	s := &Server{diag: redact.NewDiagnostic("/home/u"), log: slog.New(slog.NewTextHandler(&logged, nil))}
	key := "sk-ant-api03-" + strings.Repeat("Q", 40) + "AA"
	boom := s.recovered("consult", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("bad state near " + key)
	})
	res, err := boom(context.Background(), &mcp.CallToolRequest{})
	if err != nil || res == nil || !res.IsError {
		t.Fatalf("result %v, error %v; want an error result", res, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if got, want := text, "> Error [PROCESS_ERROR]: coagent8 hit an internal error in consult"; !strings.HasPrefix(got, want) {
		t.Errorf("text %q, want prefix %q", got, want)
	}
	if sc := fmt.Sprint(res.StructuredContent); !strings.Contains(sc, "internal.panic") {
		t.Errorf("structured content %v lacks the reason", res.StructuredContent)
	}
	log := logged.String()
	if !strings.Contains(log, "tool handler panicked") || !strings.Contains(log, "recover_test.go") {
		t.Errorf("log lacks the panic or its stack:\n%s", log)
	}
	if strings.Contains(log, key) || strings.Contains(text, key) {
		t.Errorf("the credential in the panic value reached the log or the caller:\n%s", log)
	}

	want := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	fine := s.recovered("doctor", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return want, nil })
	if got, err := fine(context.Background(), &mcp.CallToolRequest{}); got != want || err != nil {
		t.Errorf("a returning handler: %v, %v", got, err)
	}
}
