package gate

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzQuickEvent: where the one-pass reader accepts an event payload, it
// finds what encoding/json (the client's reading) finds: the same block
// and the same strings, decoded.
func FuzzQuickEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`,
		`{"delta":{"text":"a\"b\n","type":"text_delta"},"index":3,"type":"content_block_delta"}`,
		`{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"x"}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`,
		`{"delta":{"thinking":"t","partial_json":"{\"a\":1}"},"index":0}`,
		`{"a":{"b":{"c":1}}}`, `{}`, `{"index":-1}`, `{"index":1.5}`, `{"text":"x","delta":"y"}`,
		`{"":{"0":"\0"}}`, `{"index":01}`, "{\"delta\":\"\x01\"}", "{\"delta\":\"\xff\"}",
		// empty arrays (OpenAI's logprobs) where a string or an index is read
		`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":" hi","logprobs":[],"obfuscation":"IEJ"}`,
		`{"delta":[]}`, `{"delta":{"text":[]}}`, `{"content_block":[]}`, `{"index":[]}`, `{"output_index":[],"index":1}`,
		`{"a":{"b":{"c":[]}}}`, `{"a":[ ]}`, `{"a":[1]}`, `{"a":[[]]}`, `{"a":[]]}`, `{"a":[}`, `[]`,
		`{"delta":"sk-","logprobs":[],"output_index":0}`, `{"index":0,"delta":{"text":"a","x":[]},"y":[]}`,
		`{"a":[],"b":[],"delta":"\\"}`, `{"index":"0","delta":{"text":"x"}}`, `{"index":1.0}`, `{"index":1e0}`, `{"index":null}`, `{"output_index":0,"content_index":[]}`, `{"summary_index":[]}`,
		`{"delta":{"partial_json":[],"text":"k"}}`, `{"content_block":{"text":[],"thinking":"t"},"index":2}`,
		`{"delta":[],"delta":"x"}`, `{"x":[]}{"delta":"y"}`, `{"delta":"a"}[]`, `{"x":[]` + "\n" + `,"delta":"y"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		var q, s deltaEvent
		if !quickEvent(payload, &q) {
			return
		}
		if !slowEvent(payload, &s) {
			t.Fatalf("%q: the quick reader accepts what encoding/json refuses", payload)
		}
		if q.block != s.block || q.odd != s.odd {
			t.Fatalf("%q: block %v odd %v, encoding/json %v odd %v", payload, q.block, q.odd, s.block, s.odd)
		}
		got := decodedPieces(t, q.pieces, true)
		want := decodedPieces(t, s.pieces, false)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%q: pieces %q, encoding/json %q", payload, got, want)
		}
	})
}

// TestQuickEventProviderShapes: the events providers send take the quick
// path (captured shapes; an OpenAI text delta carries "logprobs":[]), and
// both readers find the same block and strings in them.
func TestQuickEventProviderShapes(t *testing.T) {
	for _, tc := range []struct {
		name, payload string
		block         blockKey
		pieces        []string
	}{
		{"anthropic text", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
			blockKey{0, -1, -1}, []string{"Hello"}},
		{"anthropic block start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
			blockKey{1, -1, -1}, []string{""}},
		{"anthropic tool input", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}`,
			blockKey{2, -1, -1}, []string{`{"path":`}},
		{"openai text", `{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_0831a33f96d9eed3","output_index":0,"content_index":0,"delta":" Hello","logprobs":[],"obfuscation":"IEJNG9po3UP16vB"}`,
			blockKey{0, 0, -1}, []string{" Hello"}},
		{"openai reasoning summary", `{"type":"response.reasoning_summary_text.delta","sequence_number":5,"item_id":"rs_1","output_index":0,"summary_index":1,"delta":"**Plan","obfuscation":"x1"}`,
			blockKey{0, -1, 1}, []string{"**Plan"}},
		{"openai arguments", `{"type":"response.function_call_arguments.delta","sequence_number":7,"item_id":"fc_1","output_index":1,"delta":"{\"cmd\"","obfuscation":"Qw"}`,
			blockKey{1, -1, -1}, []string{`{"cmd"`}},
		{"openai part added", `{"type":"response.content_part.added","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}`,
			blockKey{0, 0, -1}, nil},
		{"openai item added", `{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}`,
			blockKey{0, -1, -1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q, s deltaEvent
			if !quickEvent([]byte(tc.payload), &q) {
				t.Fatal("the quick reader refuses a provider's event")
			}
			if !slowEvent([]byte(tc.payload), &s) {
				t.Fatal("encoding/json refuses a provider's event")
			}
			for _, r := range []struct {
				name string
				e    deltaEvent
				raw  bool
			}{{"quick", q, true}, {"slow", s, false}} {
				if r.e.block != tc.block {
					t.Errorf("%s: block %v, want %v", r.name, r.e.block, tc.block)
				}
				if diff := cmp.Diff(tc.pieces, decodedPieces(t, r.e.pieces, r.raw)); diff != "" {
					t.Errorf("%s: pieces (-want +got):\n%s", r.name, diff)
				}
			}
		})
	}
}

// decodedPieces returns the pieces as text; raw pieces (the quick
// reader's JSON string bodies) are decoded first.
func decodedPieces(t *testing.T, ps [][]byte, raw bool) []string {
	var out []string
	for _, p := range ps {
		s := string(p)
		if raw && json.Unmarshal([]byte(`"`+s+`"`), &s) != nil {
			t.Fatalf("the quick reader returned a string body that does not decode: %q", p)
		}
		out = append(out, s)
	}
	return out
}

// stringAtScalar is the byte-by-byte definition of a JSON string's end.
func stringAtScalar(line []byte, start int) ([]byte, bool) {
	v := line[start:]
	for j := 0; j < len(v); j++ {
		switch v[j] {
		case '\\':
			j++
		case '"':
			return v[:j], true
		}
	}
	return nil, false
}

// FuzzStringAt: the vectorised search ends a string where the byte-by-byte
// definition does, for any bytes.
func FuzzStringAt(f *testing.F) {
	for _, s := range []string{`abc"`, `a\"b"`, `\\"`, `\\\"x"`, `\`, ``, `"`, `abc`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		got, gok := stringAt(v, 0)
		want, wok := stringAtScalar(v, 0)
		if gok != wok || !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q %v want %q %v", v, got, gok, want, wok)
		}
	})
}

// FuzzEscaped: the one-search escape test agrees with one search per
// escape, for any bytes.
func FuzzEscaped(f *testing.F) {
	for _, s := range []string{`\u0041`, `a\/b`, `\\`, `\`, `\u0`, `\"\n\u00`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		want := bytes.Contains(p, []byte(`\u00`)) || bytes.Contains(p, []byte(`\/`))
		if got := escaped(p); got != want {
			t.Fatalf("%q: got %v want %v", p, got, want)
		}
	})
}
