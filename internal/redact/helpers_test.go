package redact_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/coagent8/coagent8/internal/redact"
)

// streamed writes s through r.Writer in chunks cut by rng (1..maxChunk bytes).
func streamed(t testing.TB, r *redact.Redactor, s string, rng *rand.Rand, maxChunk int) string {
	t.Helper()
	var out bytes.Buffer
	w := r.Writer(&out)
	for len(s) > 0 {
		n := min(len(s), 1+rng.IntN(maxChunk))
		if _, err := w.Write([]byte(s[:n])); err != nil {
			t.Fatalf("Write: %v", err)
		}
		s = s[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return out.String()
}
