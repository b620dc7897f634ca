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

	"github.com/coagent8/coagent8/internal/redact"
)

// maxInvalidMessage bounds the detail of an invalid-params error, in bytes.
const maxInvalidMessage = 300

// resolver returns a schema's resolved form, built on first use: resolving
// every tool's schemas at start-up was most of the server's start time
// (issue 2: process start to tools/list).
type resolver func() *jsonschema.Resolved

// schemaFor infers T's input schema (additionalProperties false) and lets
// edit add constraints (enums, bounds, required fields).
func schemaFor[T any](edit func(s *jsonschema.Schema)) (*jsonschema.Schema, resolver) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("schema for %T: %v", *new(T), err)) // a programming error, caught by tests
	}
	s.Required = nil
	if edit != nil {
		edit(s)
	}
	return s, sync.OnceValue(func() *jsonschema.Resolved {
		r, err := s.Resolve(nil)
		if err != nil {
			panic(fmt.Sprintf("resolve schema for %T: %v", *new(T), err)) // caught by TestEverySchemaResolves
		}
		return r
	})
}

// decode validates raw arguments against the schema and decodes them
// strictly. Any problem is JSON-RPC invalid params (never a tool result),
// so an unknown field such as "approve" or "sandbox" can never be
// mistaken for a handled request.
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
