package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// lineReader adapts a bufio.Reader to Reader (no limit needed here).
type lineReader struct{ r *bufio.Reader }

func (l lineReader) Next() ([]byte, error) {
	b, err := l.r.ReadBytes('\n')
	if len(b) > 0 && err == io.EOF {
		return b, nil
	}
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}

type handler struct {
	notes chan string
}

func (h *handler) Notification(method string, _ json.RawMessage) { h.notes <- method }
func (h *handler) Request(method string, _ json.RawMessage) (any, *Error) {
	if method == "ask" {
		return map[string]string{"decision": "decline"}, nil
	}
	return nil, &Error{Code: CodeMethodNotFound, Message: "no"}
}

// peer is a scripted server: it reads our requests and writes lines.
func newPair(t *testing.T) (*Conn, *bufio.Reader, io.WriteCloser, *handler) {
	t.Helper()
	srvR, cliW := io.Pipe()
	cliR, srvW := io.Pipe()
	h := &handler{notes: make(chan string, 8)}
	c := New(lineReader{bufio.NewReader(cliR)}, cliW, h, Options{})
	t.Cleanup(func() { srvW.Close(); cliW.Close() })
	return c, bufio.NewReader(srvR), srvW, h
}

func TestCallNotifyAndRequests(t *testing.T) {
	c, in, out, h := newPair(t)
	done := make(chan error, 1)
	var got struct{ V int }
	go func() { done <- c.Call(context.Background(), "m", map[string]int{"a": 1}, &got) }()
	req, _ := in.ReadString('\n')
	if !strings.Contains(req, `"method":"m"`) || !strings.Contains(req, `"id":1`) {
		t.Fatalf("request = %s", req)
	}
	io.WriteString(out, `{"id":1,"result":{"V":42}}`+"\n")
	go func() {
		io.WriteString(out, `{"method":"note","params":{}}`+"\n")
		io.WriteString(out, `{"id":7,"method":"ask","params":{}}`+"\n")
		io.WriteString(out, `{"id":8,"method":"other","params":{}}`+"\n")
	}()
	if err := <-done; err != nil || got.V != 42 {
		t.Fatalf("Call = %v, %+v", err, got)
	}
	if m := <-h.notes; m != "note" {
		t.Errorf("notification = %q", m)
	}
	a1, _ := in.ReadString('\n')
	a2, _ := in.ReadString('\n')
	if !strings.Contains(a1, `"id":7,"result":{"decision":"decline"}`) || !strings.Contains(a2, `"id":8,"error":{"code":-32601`) {
		t.Errorf("answers = %s %s", a1, a2)
	}
}

func TestCallErrors(t *testing.T) {
	c, in, out, _ := newPair(t)
	// One server goroutine: answers "m" with an error, never answers
	// "slow", and sends a malformed record after "slow".
	go func() {
		for {
			req, err := in.ReadString('\n')
			if err != nil {
				return
			}
			switch {
			case strings.Contains(req, `"method":"m"`):
				io.WriteString(out, `{"id":1,"error":{"code":-32600,"message":"bad"}}`+"\n")
			case strings.Contains(req, `"method":"slow"`):
				time.Sleep(50 * time.Millisecond)
				io.WriteString(out, "not json\n")
			}
		}
	}()
	var je *Error
	if err := c.Call(context.Background(), "m", nil, nil); !errors.As(err, &je) || je.Code != -32600 {
		t.Fatalf("err = %v, want *Error -32600", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := c.Call(ctx, "slow", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline", err)
	}
	<-c.Done()
	if c.Err() == nil {
		t.Error("malformed record did not end the connection")
	}
	if err := c.Call(context.Background(), "after", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after close = %v", err)
	}
}
