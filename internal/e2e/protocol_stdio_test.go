package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// rawServer is the built binary driven line by line over stdio, to send
// what no SDK client sends: malformed lines, requests out of order,
// cancellations.
type rawServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan map[string]any
	stderr *syncBuffer
}

func startRaw(t *testing.T, environ []string) *rawServer {
	t.Helper()
	cmd := exec.Command(binary, "serve")
	cmd.Env = environ
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &rawServer{t: t, cmd: cmd, in: in, lines: make(chan map[string]any, 64), stderr: &syncBuffer{}}
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparsable": sc.Text()}
			}
			r.lines <- m
		}
	}()
	return r
}

func (r *rawServer) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatalf("write %q: %v", line, err)
	}
}

// next returns the next message the server wrote (nil when stdout ended).
func (r *rawServer) next() map[string]any {
	r.t.Helper()
	select {
	case m := <-r.lines:
		return m
	case <-time.After(60 * time.Second):
		r.t.Fatalf("no message from the server; stderr:\n%s", r.stderr.Bytes())
		return nil
	}
}

// until returns the response with id, failing on any message before it
// for which unexpected returns true.
func (r *rawServer) until(id float64, unexpected func(map[string]any) bool) map[string]any {
	r.t.Helper()
	for {
		m := r.next()
		if m == nil {
			r.t.Fatalf("stdout ended before response %v; stderr:\n%s", id, r.stderr.Bytes())
		}
		if m["id"] == id {
			return m
		}
		if unexpected != nil && unexpected(m) {
			r.t.Fatalf("unexpected message before response %v: %v", id, m)
		}
	}
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func (r *rawServer) initialize() {
	r.t.Helper()
	r.send(initLine)
	if m := r.until(1, nil); m["result"] == nil {
		r.t.Fatalf("initialize = %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// errorOf returns the JSON-RPC error of m as id, code, message.
func errorOf(m map[string]any) (any, float64, string) {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return m["id"], code, msg
}

// TestProtocolMalformedLinesKeepServing (issue 19 item 1): each malformed
// line gets the JSON-RPC error the spec names and the same server then
// answers tools/list. Before the fix the SDK transport ended the process.
func TestProtocolMalformedLinesKeepServing(t *testing.T) {
	r := startRaw(t, env(t, "http://127.0.0.1:9"))
	r.initialize()
	tests := []struct {
		name, line string
		wantID     any
		wantCode   float64
	}{
		{"invalid JSON", `{"jsonrpc":"2.0","id":5,"method":`, nil, -32700},
		{"not JSON at all", `hello`, nil, -32700},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, 7.0, -32600},
		{"no jsonrpc member", `{"id":"s8","method":"tools/list"}`, "s8", -32600},
		{"batch", `[{"jsonrpc":"2.0","id":9,"method":"tools/list"}]`, nil, -32600},
		{"empty batch", `[]`, nil, -32600},
		{"scalar", `42`, nil, -32600},
		{"method not a string", `{"jsonrpc":"2.0","id":10,"method":1}`, 10.0, -32600},
		// The SDK answered 1.5 as id 1 and 1e23 as a negative int64, took a
		// null id for a notification and dropped a method-less object unanswered.
		{"fractional id", `{"jsonrpc":"2.0","id":11.5,"method":"tools/list"}`, 11.5, -32600},
		{"huge id", `{"jsonrpc":"2.0","id":99999999999999999999999,"method":"tools/list"}`, 1e23, -32600},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, nil, -32600},
		{"no method result or error", `{"jsonrpc":"2.0","id":12}`, 12.0, -32600},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.t = t
			r.send(tt.line)
			id, code, msg := errorOf(r.next())
			if d := cmp.Diff([]any{tt.wantID, tt.wantCode}, []any{id, code}); d != "" || msg == "" {
				t.Fatalf("reply to %s (-want +got):\n%s message %q", tt.line, d, msg)
			}
			listID := float64(100 + i)
			r.send(`{"jsonrpc":"2.0","id":` + jsonNum(listID) + `,"method":"tools/list"}`)
			if m := r.until(listID, nil); m["result"] == nil {
				t.Fatalf("tools/list after %s = %v", tt.name, m)
			}
		})
	}
	r.t = t
	if r.cmd.ProcessState != nil {
		t.Fatal("the server exited")
	}
}

// sessionStates are the states in a session list response.
func sessionStates(m map[string]any) []string {
	res, _ := m["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	list, _ := sc["sessions"].([]any)
	var out []string
	for _, v := range list {
		i, _ := v.(map[string]any)
		st, _ := i["state"].(string)
		out = append(out, st)
	}
	return out
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }

// TestProtocolLifecycleErrors (issue 19 item 5): a request before
// initialize and a second initialize are refused with -32600 (not code
// 0); logging/setLevel, whose capability coagent8 does not declare, is
// -32601 for any level, bogus or not.
func TestProtocolLifecycleErrors(t *testing.T) {
	r := startRaw(t, env(t, "http://127.0.0.1:9"))
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if _, code, msg := errorOf(r.until(2, nil)); code != -32600 || !strings.Contains(msg, "initializ") {
		t.Fatalf("tools/list before initialize: code %v message %q, want -32600", code, msg)
	}
	r.initialize()
	r.send(strings.Replace(initLine, `"id":1`, `"id":3`, 1))
	if _, code, _ := errorOf(r.until(3, nil)); code != -32600 {
		t.Fatalf("second initialize: code %v, want -32600", code)
	}
	for id, level := range map[float64]string{4: "debug", 5: "bogus"} {
		r.send(`{"jsonrpc":"2.0","id":` + jsonNum(id) + `,"method":"logging/setLevel","params":{"level":"` + level + `"}}`)
		if _, code, _ := errorOf(r.until(id, nil)); code != -32601 {
			t.Fatalf("logging/setLevel %s: code %v, want -32601", level, code)
		}
	}
	r.send(`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{}}`)
	r.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if m := r.until(7, nil); m["result"] == nil {
		t.Fatalf("ping = %v", m)
	}
}

// TestProtocolNoResponseAfterCancelled (issue 19 item 5): once the client
// sends notifications/cancelled for a running tools/call, no response
// with that id is written, and the server keeps answering.
func TestProtocolNoResponseAfterCancelled(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: slowReply(30)})
	r := startRaw(t, env(t, dbl.URL()))
	r.initialize()
	ws := t.TempDir()
	args, _ := json.Marshal(map[string]any{"proposal": "long one", "backend": "claude", "workspace_path": ws})
	r.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"consult","arguments":` + string(args) + `}}`)
	streaming(t, dbl, 0)
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":20,"reason":"test"}}`)
	isCancelled := func(m map[string]any) bool { return m["id"] == 20.0 }
	// The turn ends when its context is cancelled; poll the archive until
	// it is no longer running, then give the handler time to answer.
	list, _ := json.Marshal(map[string]any{"action": "list", "workspace_path": ws})
	for id, deadline := 30.0, time.Now().Add(60*time.Second); ; id++ {
		if time.Now().After(deadline) {
			t.Fatal("the cancelled turn never ended")
		}
		r.send(`{"jsonrpc":"2.0","id":` + jsonNum(id) + `,"method":"tools/call","params":{"name":"session","arguments":` + string(list) + `}}`)
		if states := sessionStates(r.until(id, isCancelled)); len(states) == 1 && states[0] != "running" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second)
	r.send(`{"jsonrpc":"2.0","id":99,"method":"ping"}`)
	r.until(99, isCancelled)
}

// TestProtocolOrderlyShutdownLogsNoError (issue 19 item 18): stdin EOF
// and SIGTERM end the server with status 0 and no level=ERROR line.
func TestProtocolOrderlyShutdownLogsNoError(t *testing.T) {
	for _, end := range []string{"stdin EOF", "SIGTERM"} {
		t.Run(end, func(t *testing.T) {
			r := startRaw(t, env(t, "http://127.0.0.1:9"))
			r.initialize()
			r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			r.until(2, nil)
			if end == "SIGTERM" {
				r.cmd.Process.Signal(syscall.SIGTERM)
			} else {
				r.in.Close()
			}
			done := make(chan error, 1)
			go func() { done <- r.cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("exit: %v; stderr:\n%s", err, r.stderr.Bytes())
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the server did not exit")
			}
			if s := string(r.stderr.Bytes()); strings.Contains(s, "level=ERROR") {
				t.Fatalf("orderly shutdown logged an error:\n%s", s)
			}
		})
	}
}
