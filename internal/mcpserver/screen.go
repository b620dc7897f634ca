package mcpserver

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// screen decides what one stdin line is. A well-formed JSON-RPC 2.0
// message is returned for the SDK; anything else gets the error response
// JSON-RPC 2.0 §5.1 names, to be written back instead (issue 19 item 1):
//
//   - not JSON: -32700 parse error, id null;
//   - a batch (JSON array): -32600 invalid request, id null. MCP
//     2025-06-18 and later removed batching; coagent8 refuses it under
//     every revision rather than answer some messages of a batch;
//   - not an object, a "jsonrpc" member other than "2.0", a bad id or
//     method: -32600 invalid request, with the message's id when it has a
//     usable one, else null.
//
// Exactly one of msg and reply is non-nil.
func screen(line []byte) (msg jsonrpc.Message, reply []byte) {
	if !json.Valid(line) {
		return nil, errorReply(nil, jsonrpc.CodeParseError, "Parse error: the line is not valid JSON")
	}
	switch line[0] {
	case '[':
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not supported; send one message per line")
	case '{':
	default:
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: a JSON-RPC message must be a JSON object")
	}
	var head struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		// "jsonrpc" is not a string.
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	id := usableID(head.ID)
	if head.JSONRPC == nil || *head.JSONRPC != "2.0" {
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	if why := shapeProblem(head.ID, head.Method, head.Result, head.Error); why != "" {
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+why)
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
	}
	return m, nil
}

// maxExactID bounds a numeric id: the SDK decodes ids as float64 and
// answers with them as int64, so 1.5 would be answered as 1 and 1e23 as
// -9223372036854775808, and the client would wait for its id forever.
const maxExactID = 1 << 53

// shapeProblem says why a JSON-RPC object is neither a request, a
// notification nor a response ("" when it is one of them). The SDK would
// take a request id of null for a notification and answer nothing (MCP
// base protocol: a request id MUST NOT be null), mangle a fractional or
// huge numeric id, and drop an object with neither method nor result nor
// error without a word.
func shapeProblem(id, method, result, errObj json.RawMessage) string {
	if method == nil {
		if result == nil && errObj == nil {
			return `the message has no "method" (request or notification) and no "result" or "error" (response)`
		}
		return ""
	}
	if id == nil {
		return "" // a notification
	}
	var v any
	if json.Unmarshal(id, &v) != nil {
		return "" // DecodeMessage names it
	}
	switch n := v.(type) {
	case string:
		return ""
	case float64:
		if n == math.Trunc(n) && math.Abs(n) <= maxExactID {
			return ""
		}
		return "a numeric request id must be an integer of at most 2^53 in magnitude"
	case nil:
		return "a request id must be a string or an integer, not null (MCP base protocol)"
	}
	return "" // DecodeMessage names it
}

// usableID returns raw if it is a JSON string or number (the id kinds
// JSON-RPC 2.0 allows besides null), else nil, which replies with null.
func usableID(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return raw
	}
	return nil
}

// errorReply is the JSON-RPC error response line for id (nil: null).
func errorReply(id json.RawMessage, code int64, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{code, message}})
	if err != nil {
		panic("mcpserver: marshal error reply: " + err.Error()) // only strings and a valid raw id
	}
	return append(b, '\n')
}
