package gate

// The Decoder-based body reader that parseBody replaced (a token walk
// with encoding/json), kept as the reference FuzzParseBodyAgainstDecoder
// compares the fast reader with: both must accept the same bodies and
// read the same model, limits and tool types.

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func parseBodyRef(b []byte) (body, error) {
	var req body
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := walkObjectRef(dec, func(key string) error { return fieldRef(&req, dec, key) }); err != nil {
		return body{}, err
	}
	if len(bytes.TrimSpace(b[dec.InputOffset():])) != 0 {
		return body{}, errNotObject // nothing may follow the object
	}
	if req.Model == "" {
		return body{}, errors.New("request body names no model")
	}
	for _, p := range []*int64{req.MaxTokens, req.MaxOutputTokens} {
		if p != nil && *p <= 0 {
			return body{}, errors.New("output limit must be positive")
		}
	}
	return req, nil
}

func fieldRef(req *body, dec *json.Decoder, key string) error {
	var dst any
	switch key {
	case "model":
		dst = &req.Model
	case "max_tokens":
		dst = &req.MaxTokens
	case "max_output_tokens":
		dst = &req.MaxOutputTokens
	case "tools":
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return errors.New(`request body has an invalid "tools"`)
		}
		var err error
		req.ToolTypes, err = toolTypesRef(raw)
		return err
	case "mcp_servers":
		req.MCPServers = true
		var skip json.RawMessage
		dst = &skip
	default:
		for _, m := range []string{"model", "max_tokens", "max_output_tokens", "tools", "mcp_servers"} {
			if strings.EqualFold(key, m) {
				return errors.New("request body spells " + m + " ambiguously")
			}
		}
		var skip json.RawMessage
		dst = &skip
	}
	if err := dec.Decode(dst); err != nil {
		return errors.New("request body has an invalid " + strconv.Quote(key))
	}
	return nil
}

func toolTypesRef(raw json.RawMessage) ([]string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, errors.New(`request body's "tools" is not an array`)
	}
	var types []string
	for dec.More() {
		typ, nested, err := toolTypeRef(dec)
		if err != nil {
			return nil, err
		}
		types = append(append(types, typ), nested...)
	}
	return types, nil
}

func toolTypeRef(dec *json.Decoder) (typ string, nested []string, err error) {
	err = walkObjectRef(dec, func(key string) error {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return errNotObject
		}
		switch {
		case key == "type":
			if err := json.Unmarshal(raw, &typ); err != nil {
				return errors.New(`a tool's "type" is not a string`)
			}
		case key == "tools":
			var err error
			nested, err = toolTypesRef(raw)
			return err
		case strings.EqualFold(key, "type"), strings.EqualFold(key, "tools"):
			return errors.New("a tool spells " + strings.ToLower(key) + " ambiguously")
		}
		return nil
	})
	return typ, nested, err
}

func walkObjectRef(dec *json.Decoder, visit func(key string) error) error {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errNotObject
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return errNotObject
		}
		if seen[key] {
			return errors.New("request body repeats the key " + strconv.Quote(key))
		}
		seen[key] = true
		if err := visit(key); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return errNotObject
	}
	return nil
}

// FuzzParseBodyAgainstDecoder: parseBody and the Decoder-based reference
// agree on every input: the same refusal or the same reading.
func FuzzParseBodyAgainstDecoder(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","max_tokens":1,"tools":[{"name":"a"},{"type":"bash_20250124"}]}`,
		`{"model":"m","tools":[{"type":"web_search"}],"mcp_servers":[]}`,
		`{"model":"m","tools":[{"Type":"x","type":"y"}]}`,
		`{"model":"m","tools":[{"type":"namespace","tools":[{"type":"function"},{"type":"mcp"}]}]}`,
		` {"model":"m\u0031","max_output_tokens":5,"x":{"a":["\"]",{"b":null}]},"y":-1.5e3} `,
		`{"model":"m","model":"n"}`, `{"mod\u0065l":"m","model":"n"}`, `{"MODEL":"m"}`, `[]`, `{"model":"m"} x`,
		`{"model":"m","tools":null,"max_tokens":null}`, "{\"model\":\"m\",\"\xff\":1,\"\xfe\":2}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gerr := parseBody(b)
		want, werr := parseBodyRef(b)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("parseBody(%q) error %v, reference %v", b, gerr, werr)
		}
		if gerr != nil {
			return
		}
		if got.Model != want.Model || !samePtr(got.MaxTokens, want.MaxTokens) || !samePtr(got.MaxOutputTokens, want.MaxOutputTokens) ||
			got.MCPServers != want.MCPServers || strings.Join(got.ToolTypes, "\x00") != strings.Join(want.ToolTypes, "\x00") {
			t.Fatalf("parseBody(%q) = %+v, reference %+v", b, got, want)
		}
	})
}

func samePtr(x, y *int64) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
