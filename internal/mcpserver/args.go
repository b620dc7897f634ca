package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/turn"
)

// maxInvalidMessage bounds the detail of an invalid-params error, in bytes.
const maxInvalidMessage = 300

// resolver returns a schema's resolved form, built on first use: resolving
// every tool's schemas at start-up was most of the server's start time
// (issue 2: process start to tools/list).
type resolver func() *jsonschema.Resolved

// schemaFor infers T's input schema (additionalProperties false) and lets
// edit add constraints (enums, bounds, required fields). It returns the
// schema to advertise, in which every type list is rewritten as
// single-type anyOf branches ([splitTypeUnions]), and the resolver of the
// inferred form, which accepts the same values (TestSplitTypeUnionsValidatesAlike)
// and whose validator names a wrong type in one line ("want one of
// "null, boolean"") where anyOf's lists every branch.
func schemaFor[T any](edit func(s *jsonschema.Schema)) (*jsonschema.Schema, resolver) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("schema for %T: %v", *new(T), err)) // a programming error, caught by tests
	}
	s.Required = nil
	if edit != nil {
		edit(s)
	}
	advertised := s.CloneSchemas()
	splitTypeUnions(advertised)
	return advertised, sync.OnceValue(func() *jsonschema.Resolved {
		r, err := s.Resolve(nil)
		if err != nil {
			panic(fmt.Sprintf("resolve schema for %T: %v", *new(T), err)) // caught by TestEverySchemaResolves
		}
		return r
	})
}

// decode validates raw arguments against the schema and decodes them
// strictly. Any problem is a JSON-RPC invalid-params error, which the
// handler passes to [Server.inputError]; either way the call is refused
// before anything runs, so an unknown field such as "approve" or
// "sandbox" can never be mistaken for a handled request.
func decode[T any](raw json.RawMessage, resolved resolver) (T, error) {
	var zero, out T
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return zero, invalid("arguments must be a JSON object")
	}
	if err := resolved().Validate(generic); err != nil {
		return zero, invalid(schemaMessage(err))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil && !errors.Is(err, io.EOF) {
		return zero, invalid(err.Error())
	}
	return out, nil
}

// invalid builds the invalid-params error. The validator quotes argument
// values and unknown keys verbatim, so the detail is redacted (answer
// profile) and only then bounded: a credential pasted into the wrong field
// must not come back whole, nor as a prefix cut by the bound.
func invalid(msg string) error {
	msg, cut := redact.NewAnswer().Bound(msg, maxInvalidMessage)
	if cut {
		msg += "…"
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid arguments: " + msg}
}

// schemaMessage shortens validator output and names unknown fields the
// way the original did ("Unknown arguments.X").
func schemaMessage(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "unexpected additional properties"); i >= 0 {
		return "Unknown arguments" + strings.TrimPrefix(msg[i:], "unexpected additional properties")
	}
	return msg
}

// legacyErrors are the negotiated revisions that answer invalid tool
// arguments with JSON-RPC -32602. From 2025-11-25 on, the spec (server
// tools, error handling) makes input validation errors tool execution
// errors, so the calling model sees them and can correct its call.
var legacyErrors = map[string]bool{"2024-11-05": true, "2025-03-26": true, "2025-06-18": true}

// inputError answers a refused tool call (err from [decode] or
// [invalid]): under 2025-11-25 and later it is a tool result with
// isError true, INVALID_INPUT reason "arguments.invalid" and the same
// message; under older revisions (and without a session) it stays the
// JSON-RPC error. The SDK negotiates the client's revision when it
// supports it and 2025-11-25 otherwise, so any revision outside
// legacyErrors is 2025-11-25 or later (issue 19 item 3).
func (s *Server) inputError(req *mcp.CallToolRequest, err error) (*mcp.CallToolResult, error) {
	var we *jsonrpc.Error
	if !errors.As(err, &we) || req == nil || req.Session == nil {
		return nil, err
	}
	p := req.Session.InitializeParams()
	if p == nil || legacyErrors[p.ProtocolVersion] {
		return nil, err
	}
	return s.toolError(fault.New(fault.InvalidInput, "arguments.invalid", we.Message)), nil
}

// outputSchemaFor infers T's output schema and makes it admit the error
// result every tool may return ({"schemaVersion":1,"error":{...}}, see
// [Server.toolError]): a strict host such as the MCP Inspector rejects a
// whole result, error included, that does not meet the advertised schema
// (issue 19 item 2).
func outputSchemaFor[T any]() *jsonschema.Schema {
	s, _ := schemaFor[T](nil)
	if s.Properties["schemaVersion"] == nil {
		s.Properties["schemaVersion"] = &jsonschema.Schema{Type: "integer"}
		s.PropertyOrder = append(s.PropertyOrder, "schemaVersion")
	}
	if s.Properties["error"] == nil {
		e, _ := schemaFor[turn.Error](nil)
		e.Required = []string{"code", "message", "retryable"}
		s.Properties["error"] = e
		s.PropertyOrder = append(s.PropertyOrder, "error")
	}
	if p := s.Properties["containment"]; p != nil && p.Type == "string" {
		// A turn result's containment (issue 15 scope 8).
		p.Enum = []any{adapter.ContainmentKernel, adapter.ContainmentProfile}
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func enum(s *jsonschema.Schema, name string, values ...string) {
	p := s.Properties[name]
	for _, v := range values {
		p.Enum = append(p.Enum, v)
	}
}

func nonEmpty(s *jsonschema.Schema, names ...string) {
	for _, n := range names {
		s.Properties[n].MinLength = ptr(1)
	}
}
