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

// TestEscapedOrShadowedContentIsDecided: the label patterns and the
// credential scan read what the provider decodes, not only the raw
// bytes. A labelled word with one letter written as a \u escape, a
// pattern spanning a \n escape, and a credential in an object member
// that a later member of the same name shadows (encoding/json keeps the
// last; a provider's decoder may keep the first, and the bytes leave
// either way) were sent raw (red team rt5: the patterns matched the raw
// bytes only, and the credential scan decoded into a map).
func TestEscapedOrShadowedContentIsDecided(t *testing.T) {
	key := syntheticKey()
	body := func(content string) []byte {
		return []byte(`{"model":"claude-test","max_tokens":100,"messages":[{"role":"user","content":` + content + `}]}`)
	}
	tests := []struct {
		name string
		body []byte
		want string // the refusal reason; "" = allowed
	}{
		{"plain text", body(`"hello"`), ""},
		{"escaped text", body(`"caf\u00e9 \"quoted\" a\/b\n"`), ""},
		{"non-declassifiable pattern, plain", body(`"123-45-6789"`), ReasonCategory},
		{"non-declassifiable pattern, dash escaped", body(`"123\u002d45\u002d6789"`), ReasonCategory},
		{"forbidden label, one letter escaped", body(`"K\u0065strel"`), ReasonForbidden},
		{"portal label, one letter escaped", body(`"Nighting\u0061le"`), ReasonFilterFailed},
		{"pattern across a newline escape", body(`"Osprey\nDeal"`), ReasonForbidden},
		{"credential in a shadowed member", body(`"` + strings.Replace(key, "-", `\u002d`, 1) + `","content":"hi"`), ReasonCategory},
		{"labelled word in a shadowed member", body(`"K\u0065strel","content":"hi"`), ReasonForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseConfig()
			c.Labels = append(c.Labels,
				LabelConfig{Name: "bird", Patterns: []string{"Nightingale"}, Classification: 0.5, Category: Confidential},
				LabelConfig{Name: "raptor", Patterns: []string{"Kestrel", `Osprey\s+Deal`}, Classification: 0.9, Category: Confidential})
			f := newFixture(t, c)
			in := tx(t, "x")
			in.Body = tt.body
			out, err := f.d.Seal(context.Background(), in)
			if got := reasonOf(err); got != tt.want {
				t.Fatalf("Seal(%s) reason = %q, want %q (sent %s)", tt.body, got, tt.want, out)
			}
		})
	}
}

// TestDecodeEscapes: every escape decodes as encoding/json decodes it,
// in place; an escaped backslash does not start another escape.
func TestDecodeEscapes(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":"plain"}`, `{"a":"plain"}`},
		{`"sk\u002dant\/x"`, `"sk-ant/x"`},
		{`"\"q\" \\u0041 \n\t\r\b\f"`, "\"\"q\" \\u0041 \n\t\r\b\f\""},
		{`"\ud83d\ude00 \ud83d x \u00E9"`, "\"\U0001F600 \uFFFD x \u00e9\""},
		{`"\x \u12 \"`, `"\x \u12 "`},
		{`{"k":"a","k":"\u0062"}`, `{"k":"a","k":"b"}`},
	}
	for _, tt := range tests {
		if got := string(DecodeEscapes([]byte(tt.in))); got != tt.want {
			t.Errorf("DecodeEscapes(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
