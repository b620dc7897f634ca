package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/crash"
	"github.com/coagent8/coagent8/internal/redact"
)

// guardedServer is a Server with its logger (text to logged), redactor
// and panic guard, without tools.
func guardedServer(t *testing.T, logged io.Writer) *Server {
	t.Helper()
	s := &Server{diag: redact.NewDiagnostic("/home/u"), log: slog.New(slog.NewTextHandler(logged, nil))}
	var err error
	if s.guard, err = crash.New(s.log, s.diag); err != nil {
		t.Fatal(err)
	}
	s.mcp = newSDKServer(s.log)
	return s
}

// TestRecoveredHandler: a panicking tool handler ends its own call with a
// PROCESS_ERROR internal.panic result, the process goes on, and the log
// has the panic and its stack with credentials redacted; a handler that
// returns is passed through unchanged.
func TestRecoveredHandler(t *testing.T) {
	var logged bytes.Buffer
	s := guardedServer(t, &logged)
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
	if !strings.Contains(log, "recovered a panic") || !strings.Contains(log, "recover_test.go") {
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

// TestRecoveredMiddleware: a panic in receiving middleware (here one
// panicking on tools/list and on tools/call before any tool handler)
// answers that request with PROCESS_ERROR internal.panic — JSON-RPC
// -32603 with the code and reason as data, a tool error result for
// tools/call — and the same session answers the next request.
func TestRecoveredMiddleware(t *testing.T) {
	var logged bytes.Buffer
	s := guardedServer(t, &logged)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	boom := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" || method == "tools/call" {
				panic("middleware bug on " + method)
			}
			return next(ctx, method, req)
		}
	}
	s.mcp.AddReceivingMiddleware(boom)
	s.mcp.AddReceivingMiddleware(s.recoverMethods) // as register does: last, outermost

	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.mcp.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	_, err = cs.ListTools(ctx, nil)
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("tools/list: %v, want a JSON-RPC error", err)
	}
	var data map[string]string
	_ = json.Unmarshal(we.Data, &data)
	if got, want := fmt.Sprint(we.Code, data), fmt.Sprint(jsonrpc.CodeInternalError, map[string]string{"code": "PROCESS_ERROR", "reason": crash.Reason}); got != want {
		t.Errorf("tools/list error %s, want %s", got, want)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(fmt.Sprint(res.StructuredContent), crash.Reason) {
		t.Errorf("tools/call: %v, %v; want a tool error result with %s", res, err, crash.Reason)
	}

	if err := cs.Ping(ctx, nil); err != nil {
		t.Errorf("the session did not answer the next request: %v", err)
	}
	if log := logged.String(); !strings.Contains(log, "middleware bug on tools/list") {
		t.Errorf("log lacks the panic:\n%s", log)
	}
}
