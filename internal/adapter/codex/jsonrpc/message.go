package jsonrpc

import (
	"encoding/json"
	"fmt"

	"github.com/coagent8/coagent8/internal/adapter/jsonl"
)

// message is any JSON-RPC object on the wire. Codex omits "jsonrpc" on
// its side; it is sent on ours and ignored when read.
type message struct {
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`

	// reduced is the size of the line a response was reduced from (0 for
	// one read verbatim): such a response is never decoded.
	reduced int64
}

// RecordLimitError is returned by [Conn.Call] for a response too long to
// be read verbatim: a result coagent8 verifies (a thread policy, an MCP
// status) is never judged from a reduction (issue 19 item 6).
type RecordLimitError struct {
	// Size is the response's length in bytes.
	Size int64
}

func (e *RecordLimitError) Error() string {
	return fmt.Sprintf("jsonrpc: %d-byte response exceeds the verbatim record limit", e.Size)
}

func (m *message) isRequest() bool      { return m.Method != "" && len(m.ID) > 0 }
func (m *message) isNotification() bool { return m.Method != "" && len(m.ID) == 0 }
func (m *message) isResponse() bool     { return m.Method == "" && len(m.ID) > 0 }

// Error is a JSON-RPC error object, returned by [Conn.Call] when the peer
// answered with one, and sent back for server requests a [Handler] refuses.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error returns "jsonrpc error CODE: MESSAGE".
func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Standard JSON-RPC error codes used by this package.
const (
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
)

// Handler receives what the server sends besides responses. Both methods
// run on the reader goroutine and must not block for long or call
// [Conn.Call] (that would deadlock on the reader); they may call
// [Conn.Notify] and start goroutines.
type Handler interface {
	// Notification receives a server notification. cut says how params
	// were reduced from an over-long record ([jsonl.Cut]; 0 = intact).
	Notification(method string, params json.RawMessage, cut jsonl.Cut)
	// Request answers a server→client request. A non-nil *Error is sent as
	// the error response; otherwise result is sent (nil becomes {}).
	Request(method string, params json.RawMessage) (result any, err *Error)
}
