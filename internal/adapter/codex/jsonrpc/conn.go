package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/coagent8/coagent8/internal/adapter/jsonl"
)

// ErrClosed is returned by calls pending or made after the read side ended.
var ErrClosed = errors.New("jsonrpc: connection closed")

// Reader yields one record per call (io.EOF at the end); jsonl.Reader
// implements it in bounded memory, reducing records over its limit.
type Reader interface {
	Next() (jsonl.Record, error)
}

// Conn is a client connection. Its methods are safe for concurrent use.
type Conn struct {
	w       io.Writer
	h       Handler
	onLine  func()
	wmu     sync.Mutex
	mu      sync.Mutex
	nextID  int64
	pending map[string]chan *message
	done    chan struct{}
	err     error
}

// Options configure a Conn. OnRecord, if set, is called for every record
// read (idle-timeout bookkeeping).
type Options struct {
	OnRecord func()
}

// New starts reading r and returns the connection; w receives requests.
// h must not be nil. The connection ends when r ends ([Conn.Done]).
func New(r Reader, w io.Writer, h Handler, opts Options) *Conn {
	c := &Conn{w: w, h: h, onLine: opts.OnRecord, pending: map[string]chan *message{}, done: make(chan struct{})}
	go c.read(r)
	return c
}

// Done is closed when the read side has ended; [Conn.Err] says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why reading ended: io.EOF for a clean end, a decode or limit
// error otherwise; nil while running.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Call sends a request and decodes the result into out (may be nil). It
// returns a *Error for a JSON-RPC error response, ErrClosed if the
// connection ended first, or ctx.Err() when ctx ends first.
func (c *Conn) Call(ctx context.Context, method string, params, out any) error {
	id, ch, err := c.register()
	if err != nil {
		return err
	}
	defer c.unregister(id)
	if err := c.send(message{JSONRPC: "2.0", ID: json.RawMessage(id), Method: method}, params); err != nil {
		return err
	}
	select {
	case m := <-ch:
		return decodeResult(m, out)
	case <-c.done:
		return fmt.Errorf("%s: %w", method, ErrClosed)
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func decodeResult(m *message, out any) error {
	if m.reduced > 0 {
		return &RecordLimitError{Size: m.reduced}
	}
	if m.Error != nil {
		return m.Error
	}
	if out == nil || len(m.Result) == 0 {
		return nil
	}
	if err := json.Unmarshal(m.Result, out); err != nil {
		return fmt.Errorf("decode result: %w", err)
	}
	return nil
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	return c.send(message{JSONRPC: "2.0", Method: method}, params)
}

func (c *Conn) register() (string, chan *message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return "", nil, ErrClosed
	}
	c.nextID++
	id := strconv.FormatInt(c.nextID, 10)
	ch := make(chan *message, 1)
	c.pending[id] = ch
	return id, ch, nil
}

func (c *Conn) unregister(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// send writes one record. params nil is omitted.
func (c *Conn) send(m message, params any) error {
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("encode %s params: %w", m.Method, err)
		}
		m.Params = b
	}
	return c.write(m)
}

func (c *Conn) write(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", m.Method, err)
	}
	return nil
}
