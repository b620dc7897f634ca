package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/adapter/jsonl"
	"github.com/coagent8/coagent8/internal/crash"
	"github.com/coagent8/coagent8/internal/fault"
)

type panicky struct{}

func (panicky) Notification(method string, _ json.RawMessage, _ jsonl.Cut) {
	panic("handler bug on " + method)
}
func (panicky) Request(method string, _ json.RawMessage) (any, *Error) {
	panic("handler bug on " + method)
}

// TestHandlerPanicEndsTheConnection: the handler runs on the connection's
// read goroutine, which New starts, with records the app-server (the
// agent's process) wrote. A panic there is no one's to recover — the
// Codex session guards its own goroutine, not this one — and the Go
// runtime ended the whole process: the MCP server with every job and
// call it ran (the test binary died with "panic: handler bug"). Now the
// connection ends alone, Err PROCESS_ERROR internal.panic, and a pending
// call returns ErrClosed.
func TestHandlerPanicEndsTheConnection(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","method":"note","params":{}}`,
		`{"jsonrpc":"2.0","id":7,"method":"ask","params":{}}`,
	} {
		t.Run(line[27:31], func(t *testing.T) {
			srvR, cliW := io.Pipe()
			cliR, srvW := io.Pipe()
			t.Cleanup(func() { srvW.Close(); cliW.Close() })
			go func() { _, _ = io.Copy(io.Discard, srvR) }()
			c := New(lineReader{bufio.NewReader(cliR)}, cliW, panicky{}, Options{})
			called := make(chan error, 1)
			go func() { called <- c.Call(context.Background(), "turn/start", nil, nil) }()
			if _, err := io.WriteString(srvW, line+"\n"); err != nil {
				t.Fatal(err)
			}
			select {
			case <-c.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("connection did not end")
			}
			var fe *fault.Error
			if err := c.Err(); !errors.As(err, &fe) || fe.Reason != crash.Reason {
				t.Errorf("Err() = %v, want PROCESS_ERROR %s", err, crash.Reason)
			}
			if err := <-called; !errors.Is(err, ErrClosed) {
				t.Errorf("pending call: %v, want ErrClosed", err)
			}
		})
	}
}
