package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestScreen: every malformed line gets the JSON-RPC error JSON-RPC 2.0
// §5.1 names (issue 19 item 1); a well-formed message passes.
func TestScreen(t *testing.T) {
	tests := []struct {
		line     string
		wantID   any // nil: JSON null
		wantCode float64
	}{
		{`{"jsonrpc":"2.0","id":1,`, nil, jsonrpc.CodeParseError},
		{`nope`, nil, jsonrpc.CodeParseError},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, jsonrpc.CodeInvalidRequest},
		{`[]`, nil, jsonrpc.CodeInvalidRequest},
		{`"ping"`, nil, jsonrpc.CodeInvalidRequest},
		{`null`, nil, jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"1.0","id":7,"method":"ping"}`, 7.0, jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":2,"id":7,"method":"ping"}`, nil, jsonrpc.CodeInvalidRequest},
		{`{"id":"a","method":"ping"}`, "a", jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, nil, jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":3,"method":["ping"]}`, 3.0, jsonrpc.CodeInvalidRequest},
		// Ids the SDK would mangle or take for a notification, and an
		// object that is no message at all: refused, never unanswered.
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, 1.5, jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":99999999999999999999999,"method":"ping"}`, 1e23, jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, nil, jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":3}`, 3.0, jsonrpc.CodeInvalidRequest},
	}
	for _, tt := range tests {
		msg, reply := screen([]byte(tt.line))
		if msg != nil {
			t.Errorf("%s: passed as %T", tt.line, msg)
			continue
		}
		var got struct {
			JSONRPC string `json:"jsonrpc"`
			ID      any    `json:"id"`
			Error   struct {
				Code    float64 `json:"code"`
				Message string  `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(reply, &got); err != nil || !strings.HasSuffix(string(reply), "}\n") {
			t.Errorf("%s: reply %q: %v", tt.line, reply, err)
			continue
		}
		if d := cmp.Diff([]any{"2.0", tt.wantID, tt.wantCode}, []any{got.JSONRPC, got.ID, got.Error.Code}); d != "" || got.Error.Message == "" {
			t.Errorf("%s (-want +got):\n%s message %q", tt.line, d, got.Error.Message)
		}
	}
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":-9007199254740992,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":4,"result":{}}`,
		`{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"m"}}`,
	} {
		if msg, reply := screen([]byte(line)); msg == nil || reply != nil {
			t.Errorf("valid %s: msg %v reply %s", line, msg, reply)
		}
	}
}

// TestReadLine: lines are trimmed, and a line over the limit is consumed
// whole without being buffered and reported, the next line intact.
func TestReadLine(t *testing.T) {
	in := "  a  \r\n" + strings.Repeat("x", 200) + "\n" + "b"
	r := bufio.NewReaderSize(strings.NewReader(in), 16)
	type line struct {
		Text    string
		TooLong bool
		EOF     bool
	}
	var got []line
	for {
		l, tooLong, err := readLine(r, 100)
		got = append(got, line{string(l), tooLong, errors.Is(err, io.EOF)})
		if err != nil {
			break
		}
	}
	want := []line{{"a", false, false}, {"", true, false}, {"b", false, true}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("readLine (-want +got):\n%s", d)
	}
}

// TestWithCode: no error response leaves with code 0 (issue 19 item 5).
func TestWithCode(t *testing.T) {
	plain := errors.New("refused")
	coded := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}
	tests := []struct {
		name        string
		err         error
		call        *call
		initialized bool
		want        int64
	}{
		{"request before initialize", plain, &call{method: "tools/list"}, false, jsonrpc.CodeInvalidRequest},
		{"second initialize", plain, &call{method: "initialize"}, true, jsonrpc.CodeInvalidRequest},
		{"other code-less error", plain, &call{method: "tools/call"}, true, jsonrpc.CodeInternalError},
		{"coded error kept", coded, &call{method: "tools/call"}, true, jsonrpc.CodeInvalidParams},
		{"initialize with bad params", plain, &call{method: "initialize", badParams: true}, false, jsonrpc.CodeInvalidParams},
	}
	for _, tt := range tests {
		var we *jsonrpc.Error
		if !errors.As(withCode(tt.err, tt.call, tt.initialized), &we) || we.Code != tt.want || we.Message == "" {
			t.Errorf("%s: got %v, want code %d", tt.name, we, tt.want)
		}
	}
	if withCode(nil, nil, false) != nil {
		t.Error("withCode(nil) != nil")
	}
}

// TestCancelledResponseDropped: the response to a request the client
// cancelled is not written; other responses are.
func TestCancelledResponseDropped(t *testing.T) {
	var out strings.Builder
	pr, pw := io.Pipe()
	conn, err := (&StdioTransport{In: pr, Out: &out}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		io.WriteString(pw, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`+"\n")
		io.WriteString(pw, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`+"\n")
		io.WriteString(pw, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`+"\n")
		pw.Close()
	}()
	ctx := context.Background()
	for range 3 {
		if _, err := conn.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int64{1, 2} {
		id, _ := jsonrpc.MakeID(float64(n))
		if err := conn.Write(ctx, &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if want := `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"; out.String() != want {
		t.Errorf("written = %q, want %q", out.String(), want)
	}
	if _, err := conn.Read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("after the input ended: %v, want EOF", err)
	}
}

// TestCancelledSurvivesDuplicateID: a request reusing the id of a cancelled
// call still in flight (the SDK refuses it with a null id) does not revive
// the cancelled call's response.
func TestCancelledSurvivesDuplicateID(t *testing.T) {
	var out strings.Builder
	pr, pw := io.Pipe()
	conn, err := (&StdioTransport{In: pr, Out: &out}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		io.WriteString(pw, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`+"\n")
		io.WriteString(pw, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`+"\n")
		io.WriteString(pw, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`+"\n")
		pw.Close()
	}()
	ctx := context.Background()
	for range 3 {
		if _, err := conn.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	id, _ := jsonrpc.MakeID(float64(1))
	if err := conn.Write(ctx, &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "" {
		t.Errorf("written = %q, want nothing for the cancelled call", out.String())
	}
}

// TestInitializeBadParamsIsInvalidParams: the SDK refuses an initialize
// whose params do not decode with a code-less error; on the wire it is
// -32602 invalid params, a good initialize's refusal stays -32600.
func TestInitializeBadParamsIsInvalidParams(t *testing.T) {
	var out strings.Builder
	pr, pw := io.Pipe()
	conn, err := (&StdioTransport{In: pr, Out: &out}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":null}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
	}
	go func() {
		for _, l := range lines {
			io.WriteString(pw, l+"\n")
		}
		pw.Close()
	}()
	ctx := context.Background()
	var got []int64
	for n := range lines {
		if _, err := conn.Read(ctx); err != nil {
			t.Fatal(err)
		}
		id, _ := jsonrpc.MakeID(float64(n + 1))
		out.Reset()
		if err := conn.Write(ctx, &jsonrpc.Response{ID: id, Error: errors.New("refused")}); err != nil {
			t.Fatal(err)
		}
		var resp struct{ Error struct{ Code int64 } }
		if err := json.Unmarshal([]byte(out.String()), &resp); err != nil {
			t.Fatalf("%q: %v", out.String(), err)
		}
		got = append(got, resp.Error.Code)
	}
	want := []int64{jsonrpc.CodeInvalidParams, jsonrpc.CodeInvalidParams, jsonrpc.CodeInvalidRequest}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("codes (-want +got):\n%s", d)
	}
}

// TestDrainIsBounded: at EOF a request that is never answered (a turn
// still running when the host died) holds the end of input back only
// for the drain grace, then the SDK sees EOF (and cancels the turn).
func TestDrainIsBounded(t *testing.T) {
	const drainGrace = 100 * time.Millisecond
	pr, pw := io.Pipe()
	conn, err := (&StdioTransport{In: pr, Out: io.Discard, DrainGrace: drainGrace}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		io.WriteString(pw, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`+"\n")
		pw.Close()
	}()
	ctx := context.Background()
	if _, err := conn.Read(ctx); err != nil {
		t.Fatal(err)
	}
	// The grace starts when the reader sees EOF, before this clock; half
	// of it still shows that EOF was held back.
	start := time.Now()
	if _, err := conn.Read(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after the input ended: %v, want EOF", err)
	}
	if got := time.Since(start); got < drainGrace/2 || got > 5*time.Second {
		t.Errorf("EOF after %v, want after the %v grace and promptly", got, drainGrace)
	}
}
