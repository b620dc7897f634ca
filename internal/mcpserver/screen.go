package mcpserver

import (
	"bytes"
	"encoding/json"

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
	}
	if err := json.Unmarshal(line, &head); err != nil {
		// "jsonrpc" is not a string.
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	id := usableID(head.ID)
	if head.JSONRPC == nil || *head.JSONRPC != "2.0" {
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, errorReply(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
	}
	return m, nil
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
