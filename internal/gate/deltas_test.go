package gate

import (
	"bytes"
	"testing"
)

// FuzzDeltaValues: the one-pass field search finds the same first
// occurrences as one bytes.Index per delta field.
func FuzzDeltaValues(f *testing.F) {
	for _, s := range []string{
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`,
		`data: {"type":"response.output_text.delta","delta":"x","text":"y"}`,
		`"text":"text":"delta":"":":"thinking":"partial_json":"`,
		`"delta":"\"text\":\"a"`, `":":":"`, ``, `"thinking":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got := deltaValues(line)
		for i, field := range deltaFields {
			if want := bytes.Index(line, field); got[i] != want {
				t.Fatalf("field %s in %q: got %d want %d", field, line, got[i], want)
			}
		}
	})
}
