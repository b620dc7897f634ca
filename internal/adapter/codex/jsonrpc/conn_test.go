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

	"github.com/coagent8/coagent8/internal/adapter/jsonl"
)

// lineReader adapts a bufio.Reader to Reader (no limit needed here).
type lineReader struct{ r *bufio.Reader }

func (l lineReader) Next() (jsonl.Record, error) {
	b, err := l.r.ReadBytes('\n')
	if len(b) > 0 && err == io.EOF {
		return jsonl.Record{Data: b, Size: int64(len(b))}, nil
	}
	if err != nil {
		return jsonl.Record{}, err
	}
	return jsonl.Record{Data: b[:len(b)-1], Size: int64(len(b) - 1)}, nil
}

type handler struct {
	notes chan string
}

func (h *handler) Notification(method string, _ json.RawMessage, cut jsonl.Cut) {
	if cut != 0 {
		method += " (" + cut.String() + ")"
	}
	h.notes <- method
}
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

// Issue 19 item 6: an over-long record never ends the connection. A
// response is never judged from its reduction (the call fails with
// *RecordLimitError), a request is refused unread, and a notification
// arrives clipped, saying so.
func TestReducedRecords(t *testing.T) {
	srvR, cliW := io.Pipe()
	cliR, srvW := io.Pipe()
	t.Cleanup(func() { srvW.Close(); cliW.Close() })
	h := &handler{notes: make(chan string, 8)}
	lim := jsonl.Limits{Record: 64, String: 16, Budget: 1024, Depth: 8}
	c := New(jsonl.NewReader(cliR, lim), cliW, h, Options{})
	in := bufio.NewReader(srvR)
	big := strings.Repeat("x", 200)
	done := make(chan error, 1)
	go func() { done <- c.Call(context.Background(), "thread/start", nil, nil) }()
	in.ReadString('\n')
	io.WriteString(srvW, `{"id":1,"result":{"sandbox":{"type":"readOnly"},"pad":"`+big+`"}}`+"\n")
	var rle *RecordLimitError
	if err := <-done; !errors.As(err, &rle) || rle.Size < 200 {
		t.Fatalf("Call = %v, want *RecordLimitError", err)
	}
	go func() {
		io.WriteString(srvW, `{"id":9,"method":"ask","params":{"pad":"`+big+`"}}`+"\n")
		io.WriteString(srvW, `{"method":"item/completed","params":{"text":"`+big+`"}}`+"\n")
	}()
	if a, _ := in.ReadString('\n'); !strings.Contains(a, `"id":9,"error":{"code":-32602`) {
		t.Errorf("answer to a reduced request = %s", a)
	}
	if m := <-h.notes; m != "item/completed (strings)" {
		t.Errorf("notification = %q", m)
	}
	select {
	case <-c.Done():
		t.Fatalf("connection ended: %v", c.Err())
	default:
	}
}
