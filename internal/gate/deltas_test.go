package gate

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDeltaValues: on every line a client can parse (an SSE data line
// whose payload is JSON), the one-pass field search finds the same first
// occurrences as one bytes.Index per delta field, and each value is the
// string that starts there.
func FuzzDeltaValues(f *testing.F) {
	for _, s := range []string{
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`,
		`data: {"type":"response.output_text.delta","delta":"x","text":"y"}`,
		`"text":"text":"delta":"":":"thinking":"partial_json":"`,
		`"delta":"\"text\":\"a"`, `":":":"`, ``, `"thinking":`,
		`{"a":":","text":"\\","delta":"\\\"text\":\"x"}`,
		`data: ["text",{"thinking":"a\"b"},"delta",":"]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !json.Valid(bytes.TrimPrefix(line, []byte("data: "))) {
			return // a client drops the line: nothing of it is concatenated
		}
		at, vals := deltaValues(line)
		for i, field := range deltaFields {
			want := bytes.Index(line, field)
			if at[i] != want {
				t.Fatalf("field %s in %q: got %d want %d", field, line, at[i], want)
			}
			if want < 0 {
				continue
			}
			if s, _ := stringAt(line, want+len(field)); !bytes.Equal(vals[i], s) {
				t.Fatalf("field %s in %q: value %q want %q", field, line, vals[i], s)
			}
		}
	})
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
