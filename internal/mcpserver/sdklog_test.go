package mcpserver

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestClientMistakesAreNotErrors: a client that breaks the lifecycle (a
// second initialize, a request or notifications/initialized out of
// order) is answered or ignored as before and the session goes on (a
// ping after it is answered), but nothing is logged at error level: an
// answered request is debug output, an ignored notification a warning.
func TestClientMistakesAreNotErrors(t *testing.T) {
	const (
		initialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		initialize2 = `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		early       = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		ping        = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
	)
	tests := []struct {
		name  string
		in    []string
		level slog.Level
		want  []string // records at warn or above, and the mistakes' own
		reply string   // a line the client must get
	}{
		{"second initialize at info", []string{initialize, initialized, initialize2, ping}, slog.LevelInfo,
			nil, `"id":2,"error":{"code":-32600`},
		{"second initialize at debug", []string{initialize, initialized, initialize2, ping}, slog.LevelDebug,
			[]string{"DEBUG " + clientMistakes["duplicate initialize request"].msg}, `"id":2,"error":{"code":-32600`},
		{"request before initialize at info", []string{early, initialize, initialized, ping}, slog.LevelInfo,
			nil, `"id":2,"error":{"code":-32600`},
		{"request before initialize at debug", []string{early, initialize, initialized, ping}, slog.LevelDebug,
			[]string{"DEBUG " + clientMistakes["method invalid during initialization"].msg}, `"id":2,"error":{"code":-32600`},
		{"initialized before initialize", []string{initialized, initialize, initialized, ping}, slog.LevelInfo,
			[]string{"WARN " + clientMistakes["initialized before initialize"].msg}, `"id":1,"result"`},
		{"initialized twice", []string{initialize, initialized, initialized, ping}, slog.LevelInfo,
			[]string{"WARN " + clientMistakes["duplicate initialized notification"].msg}, `"id":1,"result"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &records{level: tt.level}
			s := &Server{log: slog.New(h)}
			s.mcp = newSDKServer(s.log)
			var out bytes.Buffer
			in := strings.NewReader(strings.Join(tt.in, "\n") + "\n")
			if err := s.Serve(context.Background(), &StdioTransport{In: in, Out: &out}); err != nil {
				t.Fatal(err)
			}
			got := h.lines(func(r slog.Record) bool {
				return r.Level >= slog.LevelWarn || strings.HasPrefix(r.Message, "mcp client")
			})
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("records (-want +got):\n%s\nall records: %v", d, h.lines(func(slog.Record) bool { return true }))
			}
			for _, want := range []string{tt.reply, `"id":3,"result":{}`} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %s:\n%s", want, out.String())
				}
			}
		})
	}
}
