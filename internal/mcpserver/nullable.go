package mcpserver

import "github.com/google/jsonschema-go/jsonschema"

// splitTypeUnions rewrites, in place, every schema at or under s whose
// type is a list (jsonschema.For infers ["null", T] for every pointer,
// slice and map field) as an anyOf of single-type branches, T first and
// "null" last: {"anyOf": [{"type": T, …}, {"type": "null"}]}. The
// official MCP Inspector's --strict lint (2.12.0, rule type-union) warns
// about every type list because hosts that map tool schemas onto a
// single-type dialect (the OpenAPI subset of Gemini function
// declarations) reject the tool or drop the constraint; README "Use it
// from an MCP host".
//
// The rewrite accepts exactly the same values: a branch carries the
// type's own keywords (items, properties, additionalProperties, bounds),
// which apply only to values of that type anyway, while annotations and
// the keywords that constrain every type (enum, const) stay on the outer
// schema. A schema reached twice (a shared pointer) is rewritten once.
func splitTypeUnions(s *jsonschema.Schema) {
	splitIn(s, map[*jsonschema.Schema]bool{})
}

func splitIn(s *jsonschema.Schema, seen map[*jsonschema.Schema]bool) {
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	for _, c := range subschemas(s) {
		splitIn(c, seen)
	}
	if len(s.Types) > 1 {
		*s = unionOf(*s)
	}
}

// unionOf is s (whose Types lists more than one type) as an anyOf of
// one branch per type; its children are already rewritten.
func unionOf(s jsonschema.Schema) jsonschema.Schema {
	out := jsonschema.Schema{ID: s.ID, Schema: s.Schema, Comment: s.Comment, Defs: s.Defs, Definitions: s.Definitions,
		Anchor: s.Anchor, DynamicAnchor: s.DynamicAnchor, Vocabulary: s.Vocabulary,
		Title: s.Title, Description: s.Description, Default: s.Default, Deprecated: s.Deprecated,
		ReadOnly: s.ReadOnly, WriteOnly: s.WriteOnly, Examples: s.Examples, Enum: s.Enum, Const: s.Const}
	nullable := false
	for _, t := range s.Types {
		if t == "null" {
			nullable = true
			continue
		}
		b := typeKeywords(s)
		b.Type = t
		out.AnyOf = append(out.AnyOf, &b)
	}
	if nullable {
		out.AnyOf = append(out.AnyOf, &jsonschema.Schema{Type: "null"})
	}
	return out
}

// typeKeywords is s without its type, annotations, document keywords and
// the keywords unionOf keeps on the outer schema.
func typeKeywords(s jsonschema.Schema) jsonschema.Schema {
	s.ID, s.Schema, s.Comment, s.Defs, s.Definitions = "", "", "", nil, nil
	s.Anchor, s.DynamicAnchor, s.Vocabulary = "", "", nil
	s.Title, s.Description, s.Default, s.Deprecated, s.ReadOnly, s.WriteOnly, s.Examples = "", "", nil, false, false, false, nil
	s.Enum, s.Const = nil, nil
	s.Type, s.Types = "", nil
	return s
}

// subschemas are s's direct child schemas, every keyword that holds one.
func subschemas(s *jsonschema.Schema) []*jsonschema.Schema {
	out := []*jsonschema.Schema{s.Items, s.AdditionalItems, s.Contains, s.UnevaluatedItems, s.AdditionalProperties,
		s.PropertyNames, s.UnevaluatedProperties, s.Not, s.If, s.Then, s.Else, s.ContentSchema}
	for _, l := range [][]*jsonschema.Schema{s.PrefixItems, s.ItemsArray, s.AllOf, s.AnyOf, s.OneOf} {
		out = append(out, l...)
	}
	for _, m := range []map[string]*jsonschema.Schema{s.Properties, s.PatternProperties, s.Defs, s.Definitions,
		s.DependentSchemas, s.DependencySchemas} {
		for _, c := range m {
			out = append(out, c)
		}
	}
	return out
}
