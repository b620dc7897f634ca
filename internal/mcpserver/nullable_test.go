package mcpserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// lintFindings reports, as "path: rule", what the MCP Inspector's --strict
// schema lint (2.12.0, core/json/schemaLint.ts) warns about in a tool
// schema given as decoded JSON: a type list (type-union), a schema with no
// validation keyword (untyped-schema), a bare boolean schema where an
// object is expected (boolean-schema) and a $ref outside the document
// (remote-ref).
func lintFindings(node any, path, keyword string) []string {
	var out []string
	switch n := node.(type) {
	case bool:
		if !slices.Contains([]string{"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"}, keyword) {
			out = append(out, path+": boolean-schema")
		}
	case map[string]any:
		if _, ok := n["type"].([]any); ok {
			out = append(out, path+": type-union")
		}
		if ref, ok := n["$ref"].(string); ok && ref != "" && ref[0] != '#' {
			out = append(out, path+": remote-ref")
		}
		if !constrains(n) && keyword != "not" {
			out = append(out, path+": untyped-schema")
		}
		for _, k := range []string{"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"} {
			m, _ := n[k].(map[string]any)
			for name, sub := range m {
				out = append(out, lintFindings(sub, path+"."+k+"."+name, k)...)
			}
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf", "prefixItems"} {
			l, _ := n[k].([]any)
			for i, sub := range l {
				out = append(out, lintFindings(sub, fmt.Sprintf("%s.%s[%d]", path, k, i), k)...)
			}
		}
		for _, k := range []string{"items", "contains", "not", "propertyNames", "if", "then", "else", "additionalProperties",
			"unevaluatedProperties", "additionalItems", "unevaluatedItems", "contentSchema"} {
			if sub, ok := n[k]; ok {
				out = append(out, lintFindings(sub, path+"."+k, k)...)
			}
		}
	}
	return out
}

// constrains reports whether n has a keyword the Inspector counts as
// validating (an if needs its then or else).
func constrains(n map[string]any) bool {
	for k := range n {
		switch k {
		case "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment", "$id", "$schema", "if", "then", "else":
		default:
			return true
		}
	}
	_, then := n["then"]
	_, els := n["else"]
	_, cond := n["if"]
	return cond && (then || els)
}

// TestSchemasPassInspectorLint: no tool of any profile (aliases and run
// included) has an input or output schema the Inspector's --strict lint
// warns about; it warned 42 times, every one a nullable field inferred as
// type ["null", T] (README "Use it from an MCP host").
func TestSchemasPassInspectorLint(t *testing.T) {
	tools, _ := everyTool(&Server{})
	for name, tool := range tools {
		for kind, schema := range map[string]any{"inputSchema": tool.InputSchema, "outputSchema": tool.OutputSchema} {
			if schema == nil || schema == (*jsonschema.Schema)(nil) {
				continue
			}
			b, err := json.Marshal(schema)
			if err != nil {
				t.Fatalf("%s %s: %v", name, kind, err)
			}
			var doc any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if got := lintFindings(doc, kind, ""); len(got) != 0 {
				t.Errorf("%s: %d findings: %v", name, len(got), got)
			}
		}
	}
	if len(tools) < 12 {
		t.Fatalf("only %d tools checked", len(tools))
	}
}

// TestLintFindsTypeUnion: the lint above finds what the Inspector warned
// about, so an empty result means something.
func TestLintFindsTypeUnion(t *testing.T) {
	s, err := jsonschema.For[struct {
		Wait *bool `json:"wait"`
	}](nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	var doc any
	json.Unmarshal(b, &doc)
	if got, want := lintFindings(doc, "inputSchema", ""), []string{"inputSchema.properties.wait: type-union"}; !cmp.Equal(got, want) {
		t.Errorf("lint = %v, want %v", got, want)
	}
}

// TestSplitTypeUnions: each inferred type list becomes anyOf [T, null]
// with T's own keywords in its branch and the annotations outside.
func TestSplitTypeUnions(t *testing.T) {
	type inner struct {
		N int `json:"n"`
	}
	s, err := jsonschema.For[struct {
		Wait  *bool    `json:"wait,omitempty" jsonschema:"whether to wait"`
		Files []string `json:"files,omitempty"`
		Sub   *inner   `json:"sub,omitempty"`
		Plain string   `json:"plain"`
	}](nil)
	if err != nil {
		t.Fatal(err)
	}
	splitTypeUnions(s)
	b, _ := json.Marshal(s)
	var got, want any
	json.Unmarshal(b, &got)
	wantJSON := `{"type":"object","required":["plain"],"properties":{` +
		`"wait":{"description":"whether to wait","anyOf":[{"type":"boolean"},{"type":"null"}]},` +
		`"files":{"anyOf":[{"type":"array","items":{"type":"string"}},{"type":"null"}]},` +
		`"sub":{"anyOf":[{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}},"additionalProperties":false},{"type":"null"}]},` +
		`"plain":{"type":"string"}},"additionalProperties":false}`
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("split schema (-want +got):\n%s", d)
	}
}

// TestSplitTypeUnionsValidatesAlike: the rewritten schema accepts and
// refuses exactly the instances the inferred one does.
func TestSplitTypeUnionsValidatesAlike(t *testing.T) {
	type budget struct {
		USD float64 `json:"usd"`
	}
	type args struct {
		Wait   *bool    `json:"wait,omitempty"`
		Files  []string `json:"files,omitempty"`
		Budget *budget  `json:"budget,omitempty"`
	}
	inferred, _ := jsonschema.For[args](nil)
	split, _ := jsonschema.For[args](nil)
	splitTypeUnions(split)
	before, err := inferred.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	after, err := split.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{`{}`, `{"wait":null}`, `{"wait":true}`, `{"wait":"yes"}`, `{"files":null}`, `{"files":["a"]}`,
		`{"files":[1]}`, `{"files":"a"}`, `{"budget":null}`, `{"budget":{"usd":1}}`, `{"budget":{"usd":1,"x":2}}`, `{"budget":{}}`, `{"budget":3}`} {
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatal(err)
		}
		if got, want := after.Validate(v) == nil, before.Validate(v) == nil; got != want {
			t.Errorf("%s: split schema accepts %v, inferred %v", in, got, want)
		}
	}
}
