package gate

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/redact"
)

// TestPhantomRedacted: every phantom the gate mints is a credential format
// to internal/redact, which keeps its own copy of the format ("c8g_" and
// 43 base64url characters; redact cannot import gate). Minted phantoms are
// replaced whole by both profiles, in running text and at its end, so the
// two definitions cannot drift apart unnoticed.
func TestPhantomRedacted(t *testing.T) {
	marker := redact.KindPhantom.Marker()
	for _, r := range []*redact.Redactor{redact.NewAnswer(), redact.NewDiagnostic("")} {
		for range 200 {
			p := newPhantom().Reveal()
			if !strings.HasPrefix(p, PhantomPrefix) {
				t.Fatalf("newPhantom() = %q, want prefix %q", p, PhantomPrefix)
			}
			for _, tt := range []struct{ in, want string }{
				{p, marker},
				{"grant phantom " + p + ", live", "grant phantom " + marker + ", live"},
				{"x-api-key: " + p + "\n", "x-api-key: " + marker + "\n"},
			} {
				if got := r.String(tt.in); got != tt.want {
					t.Errorf("%v String(%q) = %q, want %q", r.Profile(), tt.in, got, tt.want)
				}
			}
		}
	}
}
