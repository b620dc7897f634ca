package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport is the MCP stdio transport coagent8 serves on:
// newline-delimited JSON-RPC 2.0 like [mcp.IOTransport], which ends the
// whole connection on one malformed line (issue 19 item 1). Here a
// malformed line is answered with the JSON-RPC error for it (see
// [screen]) and the server keeps serving. The connection also enforces
// two protocol rules the SDK does not:
//
//   - no response is sent for a request the client cancelled with
//     notifications/cancelled (MCP base protocol, cancellation);
//   - an error response never carries code 0: the SDK's lifecycle
//     refusals (a request before initialize, a second initialize) are
//     -32600 invalid request, any other code-less error -32603.
type StdioTransport struct {
	In  io.Reader
	Out io.Writer
	// MaxLine bounds one inbound line in bytes (0: [mcp.DefaultMaxLineLength]).
	// A longer line is discarded and answered -32600.
	MaxLine int
	// DrainGrace bounds how long calls in flight may still be answered
	// after In ends, before the SDK sees EOF (0: [DefaultDrainGrace]).
	DrainGrace time.Duration
}

var _ mcp.Transport = (*StdioTransport)(nil)

// Connect implements [mcp.Transport]. It starts the goroutine that reads
// In; like the SDK's, it cannot be unblocked from a read of stdin and
// ends with the process or at EOF.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	limit := t.MaxLine
	if limit <= 0 {
		limit = mcp.DefaultMaxLineLength
	}
	grace := t.DrainGrace
	if grace <= 0 {
		grace = DefaultDrainGrace
	}
	c := &stdioConn{out: t.Out, grace: grace, incoming: make(chan readResult), closed: make(chan struct{}),
		settled: make(chan struct{}, 1), inflight: map[jsonrpc.ID]*call{}}
	go c.readLoop(bufio.NewReaderSize(t.In, 64*1024), limit)
	return c, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

// call is a request of the client still waiting for its response.
type call struct {
	method    string
	cancelled bool
	// badParams marks an initialize whose params do not decode: the SDK
	// refuses it with a code-less error, which is -32602 invalid params,
	// not the -32600 of a lifecycle refusal.
	badParams bool
}

type stdioConn struct {
	out      io.Writer
	grace    time.Duration // bounds drain
	writeMu  sync.Mutex
	incoming chan readResult

	closeOnce sync.Once
	closed    chan struct{}

	// settled is signalled (without blocking) whenever a call is answered
	// or the server sends a request of its own, to wake [stdioConn.drain].
	settled chan struct{}

	mu       sync.Mutex
	inflight map[jsonrpc.ID]*call
	// outgoing counts server-to-client requests not yet answered.
	outgoing int
	// initialized is set once initialize has been answered with a result.
	initialized bool
}

func (c *stdioConn) readLoop(r *bufio.Reader, limit int) {
	for {
		line, tooLong, err := readLine(r, limit)
		if tooLong {
			c.writeRaw(errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: the message exceeds the line limit"))
		} else if len(line) > 0 {
			if msg, reply := screen(line); reply != nil {
				c.writeRaw(reply)
			} else {
				c.track(msg)
				if !c.deliver(readResult{msg: msg}) {
					return
				}
			}
		}
		if err != nil { // EOF or a read error ends the connection
			c.drain()
			c.deliver(readResult{err: err})
			return
		}
	}
}

// drain waits until every request already read has been answered before
// the end of input reaches the SDK. The SDK, on a read error, cancels
// the requests in flight (and still queued) and refuses to write any
// response, so a client that writes its requests and closes stdin at
// once (`printf … | coagent8`) got none or some of its answers, and an
// initialized notification could be handled after a cancelled
// initialize (issue 19 item 1). It stops early when the server is
// waiting on a request of its own (an approval form, a ping): the client
// that closed stdin can never answer it. A signal still ends the wait:
// [Server.Serve] closes the connection.
//
// The wait is bounded by the connection's drain grace: a host that died (kill -9) also
// closes stdin, and sends no SIGTERM after it, so a model turn still
// running must not outlive it by its whole deadline, spending the
// user's budget for nobody. Requests that answer at once (the piped
// case) are answered; a long turn is cancelled when the grace ends.
func (c *stdioConn) drain() {
	grace := time.NewTimer(c.grace)
	defer grace.Stop()
	for {
		c.mu.Lock()
		done := len(c.inflight) == 0 || c.outgoing > 0
		c.mu.Unlock()
		if done {
			return
		}
		select {
		case <-c.settled:
		case <-c.closed:
			return
		case <-grace.C:
			return
		}
	}
}

// DefaultDrainGrace bounds [stdioConn.drain] unless
// [StdioTransport.DrainGrace] says otherwise. A per-connection value,
// not a variable its test sets: the reader goroutine outlives the test
// that started it, and read the variable while the test restored it
// (a data race under -race).
const DefaultDrainGrace = 3 * time.Second

// wake signals drain without blocking.
func (c *stdioConn) wake() {
	select {
	case c.settled <- struct{}{}:
	default:
	}
}

// deliver hands r to Read; false when the connection closed first.
func (c *stdioConn) deliver(r readResult) bool {
	select {
	case c.incoming <- r:
		return true
	case <-c.closed:
		return false
	}
}

// readLine returns the next line without its line ending and surrounding
// space. A line longer than limit is consumed to its end in bounded
// memory and reported as tooLong.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > limit+2 { // +2: the line ending
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		return bytes.TrimSpace(buf), false, err
	}
}

// track records a request in flight and marks a cancelled one.
func (c *stdioConn) track(msg jsonrpc.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	req, ok := msg.(*jsonrpc.Request)
	if !ok { // a response to one of the server's requests
		if c.outgoing > 0 {
			c.outgoing--
		}
		return
	}
	if req.IsCall() {
		// A duplicate of an id still in flight is refused by the SDK
		// (answered with a null id); it must not replace the first call's
		// entry, or that call's cancellation would be forgotten.
		if _, dup := c.inflight[req.ID]; !dup {
			c.inflight[req.ID] = &call{method: req.Method,
				badParams: req.Method == "initialize" && !decodes(req.Params, &mcp.InitializeParams{})}
		}
		return
	}
	if req.Method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return
	}
	if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
		if cl, ok := c.inflight[id]; ok {
			cl.cancelled = true
		}
	}
}

// Read implements [mcp.Connection].
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case r := <-c.incoming:
		return r.msg, r.err
	}
}

// Write implements [mcp.Connection]. A response to a cancelled request
// is dropped; a code-0 error gets its JSON-RPC code.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		// Settled before any early return: drain waits for the entry to go.
		cl, initialized := c.settle(resp)
		defer c.wake()
		if cl != nil && cl.cancelled {
			return nil
		}
		resp.Error = withCode(resp.Error, cl, initialized)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.mu.Lock()
		c.outgoing++
		c.mu.Unlock()
		defer c.wake()
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeRaw(append(b, '\n'))
}

// settle removes and returns the in-flight call resp answers (nil if
// none) and reports whether the session was initialized before it.
func (c *stdioConn) settle(resp *jsonrpc.Response) (*call, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := c.inflight[resp.ID]
	delete(c.inflight, resp.ID)
	was := c.initialized
	if cl != nil && cl.method == "initialize" && resp.Error == nil {
		c.initialized = true
	}
	return cl, was
}

// withCode gives a code-less error its JSON-RPC code. The SDK refuses
// lifecycle violations (a request before initialize, a second
// initialize) with plain errors, which would go on the wire as code 0;
// they are invalid requests in the session's state.
func withCode(err error, cl *call, initialized bool) error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != 0 {
		return err
	}
	code := int64(jsonrpc.CodeInternalError)
	switch {
	case cl != nil && cl.badParams:
		code = jsonrpc.CodeInvalidParams
	case cl == nil || cl.method == "initialize" || !initialized:
		code = jsonrpc.CodeInvalidRequest
	}
	return &jsonrpc.Error{Code: code, Message: err.Error()}
}

// decodes reports whether params is a JSON object that decodes into v.
func decodes(params json.RawMessage, v any) bool {
	p := bytes.TrimSpace(params)
	return len(p) > 0 && p[0] == '{' && json.Unmarshal(p, v) == nil
}

func (c *stdioConn) writeRaw(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(b)
	return err
}

// Close implements [mcp.Connection]; it unblocks Read.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID implements [mcp.Connection]: stdio has no session id.
func (c *stdioConn) SessionID() string { return "" }
