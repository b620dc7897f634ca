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
	case "mcp_servers", "prompt":
		req.MCPServers = req.MCPServers || key == "mcp_servers"
		req.Prompt = req.Prompt || key == "prompt"
		var skip json.RawMessage
		dst = &skip
	case "previous_response_id", "conversation":
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return errors.New("request body has an invalid " + strconv.Quote(key))
		}
		if req.State == "" && string(v) != "null" {
			req.State = key
		}
		return nil
	default:
		for _, m := range []string{"model", "max_tokens", "max_output_tokens", "tools", "mcp_servers", "prompt", "previous_response_id", "conversation"} {
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
	env, hasEnv := "", false
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
		case key == "environment":
			var err error
			env, hasEnv, err = environmentTypeRef(raw)
			return err
		case strings.EqualFold(key, "type"), strings.EqualFold(key, "tools"), strings.EqualFold(key, "environment"):
			return errors.New("a tool spells " + strings.ToLower(key) + " ambiguously")
		}
		return nil
	})
	if hasEnv && env != "local" {
		typ += "." + env // not a client tool type: refused as hosted
	}
	return typ, nested, err
}

// environmentType returns the exact "type" of a tool's environment
// object raw, and whether there is one (null is none: the local mode).
// A repeated or case-variant "type" is refused, as in toolType.
func environmentTypeRef(raw json.RawMessage) (string, bool, error) {
	if string(raw) == "null" {
		return "", false, nil
	}
	var typ string
	dec := json.NewDecoder(bytes.NewReader(raw))
	err := walkObjectRef(dec, func(key string) error {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return errNotObject
		}
		switch {
		case key == "type":
			if err := json.Unmarshal(v, &typ); err != nil {
				return errors.New(`a tool environment's "type" is not a string`)
			}
		case strings.EqualFold(key, "type"):
			return errors.New("a tool environment spells type ambiguously")
		}
		return nil
	})
	if err != nil {
		return "", false, errors.New(`a tool's "environment" is not an object with one "type"`)
	}
	return typ, true, nil
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

func providerFetchRef(p Provider, b []byte) (string, error) {
	s := fetchScanRef{p: p, b: b, dec: json.NewDecoder(bytes.NewReader(b))}
	s.dec.UseNumber() // 1E1000 is valid JSON, not a float64
	return s.value("", "", 0)
}

type fetchScanRef struct {
	p   Provider
	b   []byte
	dec *json.Decoder
}

// inputItemRef reads the OpenAI input item obj (an element of the
// top-level "input" array) on its own: an id with no string "type" is an
// item reference, an id on a reasoning item without encrypted_content is
// the stored reasoning read back.
func inputItemRef(obj []byte) (string, error) {
	var id, typed, untyped, reasoning, encrypted bool
	members := map[string][]json.RawMessage{} // every copy of a repeated key
	dec := json.NewDecoder(bytes.NewReader(obj))
	_, err := dec.Token() // '{'
	for err == nil && dec.More() {
		var t json.Token
		var raw json.RawMessage
		if t, err = dec.Token(); err == nil {
			err = dec.Decode(&raw)
			k, _ := t.(string)
			members[k] = append(members[k], raw)
		}
	}
	for _, raw := range members["id"] {
		id = id || string(raw) != "null"
	}
	for _, raw := range members["encrypted_content"] {
		encrypted = encrypted || string(raw) != "null"
	}
	for _, raw := range members["type"] {
		var v string
		if string(raw) == "null" || json.Unmarshal(raw, &v) != nil {
			untyped = true
			continue
		}
		typed, reasoning = true, reasoning || v == "reasoning"
	}
	switch {
	case err != nil:
		return "", errFetchScan
	case !id:
	case untyped || !typed:
		return "item_reference", nil
	case reasoning && !encrypted:
		return "reasoning item id", nil
	}
	return "", nil
}

// value reads one JSON value, the member key of the object whose member
// parent is, and reports the first URL fetch in it.
func (s *fetchScanRef) value(key, parent string, depth int) (string, error) {
	if depth > maxFetchDepth {
		return "", errFetchScan
	}
	t, err := s.dec.Token()
	if err != nil {
		return "", errFetchScan
	}
	switch t {
	case json.Delim('{'), json.Delim('['):
		start := s.dec.InputOffset() - 1
		for s.dec.More() {
			k := ""
			if t == json.Delim('{') {
				kt, err := s.dec.Token()
				var ok bool
				if k, ok = kt.(string); err != nil || !ok {
					return "", errFetchScan
				}
				if opaque(s.p, k) {
					var skip json.RawMessage
					if err := s.dec.Decode(&skip); err != nil {
						return "", errFetchScan
					}
					continue
				}
			}
			if what, err := s.value(k, key, depth+1); what != "" || err != nil {
				return what, err
			}
		}
		if _, err := s.dec.Token(); err != nil { // the closing delimiter
			return "", errFetchScan
		}
		if s.p == OpenAI && t == json.Delim('{') && depth == 2 && key == "" && parent == "input" {
			return inputItemRef(s.b[start:s.dec.InputOffset()])
		}
		return "", nil
	}
	v, ok := t.(string)
	if !ok {
		return "", nil
	}
	switch s.p {
	case Anthropic:
		switch {
		case parent == "source" && key == "type" && v == "url":
			return "source", nil
		case parent == "source" && key == "type" && v == "file":
			return "file source", nil
		case key == "type" && v == "container_upload":
			return "container_upload", nil
		}
	case OpenAI:
		// A string image_url/file_url, or the url of an image_url object
		// (the Chat Completions form): only a data: URL is inline.
		switch {
		case key == "type" && v == "item_reference":
			return "item_reference", nil
		case key == "file_id":
			return "file_id", nil
		case fetchKey(key) && !strings.HasPrefix(v, "data:"):
			return key, nil
		case fetchKey(parent) && key == "url" && !strings.HasPrefix(v, "data:"):
			return parent, nil
		}
	}
	return "", nil
}

// FuzzProviderFetchAgainstDecoder: the one-pass URL-source scan and the
// Decoder-based reference report the same fetch on every valid body.
func FuzzProviderFetchAgainstDecoder(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"content":[{"type":"image","source":{"type":"url","url":"https://x"}}]}]}`,
		`{"messages":[{"content":[{"type":"image","source":{"\u0074ype":"\u0075rl"}}]}]}`,
		`{"input":[{"type":"input_image","image_url":"https://x"},{"image_url":{"url":"data:x"}}]}`,
		`{"input":[{"file_url":"data:x","image_url":{"url":"https://x"}}],"a":[1,true,null,-2.5e3,"\"]"]}`,
		`{"source":{"type":"base64","type":"url"}}`, `[[["image_url"]]]`, `"x"`, `{"source":"url"}`,
		`{"input":[{"type":"item_reference","id":"msg_1"},{"type":"input_file","file_id":"file-1"}]}`,
		`{"content":[{"type":"document","source":{"type":"file","file_id":"f"}},{"type":"container_upload","file_id":"f"}]}`,
		`{"input":[{"type":"input_image","file_id":null,"image_url":"data:x"}],"tools":[{"parameters":{"properties":{"file_id":{"type":"string"}}}}]}`,
		`{"messages":[{"content":[{"type":"tool_use","input":{"source":{"type":"url"}},"x":{"source":{"type":"url"}}}]}]}`,
		`{"input":[{"type":"message","id":"msg_1","content":"x"},{"id":"msg_2"}]}`, `{"input":[{"type":null,"i\u0064":"m"}]}`,
		`{"input":[{"type":"reasoning","id":"rs_1","encrypted_content":null,"summary":[{"id":"x"}]}]}`,
		`{"input":[{"type":"reasoning","type":"message","id":"rs_1","encrypted_content":"e"}],"x":{"input":[{"id":"m"}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		for _, p := range []Provider{Anthropic, OpenAI} {
			got, gerr := providerFetch(p, b)
			want, werr := providerFetchRef(p, b)
			if got != want || (gerr == nil) != (werr == nil) {
				t.Fatalf("%s providerFetch(%q) = %q, %v; reference %q, %v", p, b, got, gerr, want, werr)
			}
		}
	})
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
		`{"model":"m","previous_response_id":"resp_1"}`, `{"model":"m","conversation":{"id":"c"},"previous_response_id":null}`,
		`{"model":"m","Previous_Response_Id":"r"}`, `{"model":"m","conversation":null}`,
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
			got.MCPServers != want.MCPServers || got.Prompt != want.Prompt || got.State != want.State || strings.Join(got.ToolTypes, "\x00") != strings.Join(want.ToolTypes, "\x00") {
			t.Fatalf("parseBody(%q) = %+v, reference %+v", b, got, want)
		}
	})
}

func samePtr(x, y *int64) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
