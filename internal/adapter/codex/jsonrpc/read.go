package jsonrpc

import (
	"encoding/json"
	"fmt"

	"github.com/coagent8/coagent8/internal/adapter/jsonl"
	"github.com/coagent8/coagent8/internal/crash"
)

// read dispatches records until r ends, then fails every pending call.
func (c *Conn) read(r Reader) {
	var err error
	defer func() {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.done)
	}()
	// The handler runs here, on records the app-server (the agent's
	// process) wrote: a panic in it ends this connection (Err PROCESS_ERROR
	// internal.panic, pending calls ErrClosed), not the process that runs
	// other jobs and calls. Nobody else can recover it: New started this
	// goroutine. A nil Guard logs to standard error, diagnostic-redacted.
	defer (*crash.Guard)(nil).Recover("codex app-server connection", func(e error) { err = e })
	for {
		var rec jsonl.Record
		if rec, err = r.Next(); err != nil {
			break
		}
		if c.onLine != nil {
			c.onLine()
		}
		if err = c.dispatch(rec); err != nil {
			break
		}
	}
}

// dispatch routes one record. A record that is not a JSON-RPC object ends
// the connection: the peer is out of protocol and nothing after it can be
// trusted. A reduced record reaches only a notification handler (told how
// it was cut); a reduced response fails its call, a reduced request is
// refused unread.
func (c *Conn) dispatch(rec jsonl.Record) error {
	var m message
	if err := json.Unmarshal(rec.Data, &m); err != nil {
		return fmt.Errorf("malformed record: %w", err)
	}
	switch {
	case m.isResponse():
		if rec.Reduced {
			m.reduced = rec.Size
		}
		c.deliver(&m)
	case m.isNotification():
		c.h.Notification(m.Method, m.Params, rec.Cut)
	case m.isRequest() && rec.Reduced:
		_ = c.write(message{JSONRPC: "2.0", ID: m.ID,
			Error: &Error{Code: CodeInvalidParams, Message: "request too large"}})
	case m.isRequest():
		c.answer(&m)
	default:
		return fmt.Errorf("record is neither request, response nor notification")
	}
	return nil
}

func (c *Conn) deliver(m *message) {
	c.mu.Lock()
	ch := c.pending[string(m.ID)]
	c.mu.Unlock()
	if ch != nil {
		ch <- m // buffered 1; a late or duplicate answer is dropped below
		c.unregister(string(m.ID))
	}
}

// answer sends exactly one response to a server request. A write error
// is ignored: the peer has gone and the read side will notice.
func (c *Conn) answer(m *message) {
	result, rerr := c.h.Request(m.Method, m.Params)
	out := message{JSONRPC: "2.0", ID: m.ID}
	if rerr != nil {
		out.Error = rerr
	} else {
		b, err := json.Marshal(result)
		if err != nil || result == nil {
			b = []byte("{}")
		}
		out.Result = b
	}
	_ = c.write(out)
}
