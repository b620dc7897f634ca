package egress

import (
	"context"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestCredentialHiddenByJSONEscapesIsRefused: the provider JSON-decodes the
// body, so a credential whose characters are written as \uXXXX escapes
// reaches it whole. The built-in policy must refuse it like the plain form
// (README "credentials are never declassifiable"; red-team finding:
// `"ghp\u005f…"` and `"sk\u002dant\u002d…"` pass as raw).
func TestCredentialHiddenByJSONEscapesIsRefused(t *testing.T) {
	gh := "ghp_" + strings.Repeat("Zb9", 12)
	ant := syntheticKey()
	tests := []struct {
		name, plain, escaped string
	}{
		{"underscore escaped", gh, strings.Replace(gh, "_", `\u005f`, 1)},
		{"dashes escaped", ant, strings.ReplaceAll(ant, "-", `\u002d`)},
		{"one letter escaped", ant, `\u0073` + ant[1:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, DefaultConfig())
			in := tx(t, "marker "+tt.plain)
			in.Body = []byte(strings.Replace(string(in.Body), tt.plain, tt.escaped, 1))
			if !strings.Contains(string(in.Body), tt.escaped) {
				t.Fatalf("fixture: escaped form not in body %s", in.Body)
			}
			_, err := f.d.Seal(context.Background(), in)
			if err == nil {
				t.Fatalf("Seal(escaped credential) sent the body raw, want refusal %s", ReasonCategory)
			}
			if got := fault.From(err).Reason; got != ReasonCategory {
				t.Fatalf("Seal(escaped credential) reason = %q, want %s", got, ReasonCategory)
			}
		})
	}
}
