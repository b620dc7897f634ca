package redact

import (
	"encoding/json"
)

// Value returns a copy of a JSON-shaped value (as decoded by encoding/json:
// string, float64, bool, nil, []any, map[string]any) with every string —
// map keys included — redacted. Use it for MCP structuredContent: redacting
// the decoded value keeps the JSON valid, which rewriting the encoded text
// cannot promise. Other types are round-tripped through encoding/json first;
// if that fails, Value returns the marker of [KindSecret] instead (fail
// closed).
func (r *Redactor) Value(v any) any {
	switch x := v.(type) {
	case nil, bool, float64, int, int64, json.Number:
		return x
	case string:
		return r.String(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.Value(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[r.String(k)] = r.Value(e)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = r.String(e)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, e := range x {
			out[r.String(k)] = r.String(e)
		}
		return out
	}
	return r.roundTrip(v)
}

func (r *Redactor) roundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return KindSecret.Marker()
	}
	var dec any
	if err := json.Unmarshal(b, &dec); err != nil {
		return KindSecret.Marker()
	}
	return r.Value(dec)
}
