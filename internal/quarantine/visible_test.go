package quarantine

import "testing"

// TestVisible: what a terminal or renderer acts on, and what it draws as
// nothing, is shown as an escape — on every surface that uses Visible
// (fenced blocks, the dashboard, terminal listings), not only the job
// question. Zero-width characters made "p\u200b" read as "p", and a model
// reads Unicode tags as text the user never saw.
func TestVisible(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "fix the typo", "fix the typo"},
		{"utf8-text", "clé «ok» ✓ 日本", "clé «ok» ✓ 日本"},
		{"tab-newline-crlf", "a\tb\nc\r\nd", "a\tb\nc\r\nd"},
		{"zero-width-space", "p\u200b", `p\u200b`},
		{"zero-width-non-joiner", "a\u200cb", `a\u200cb`},
		{"zero-width-joiner", "a\u200db", `a\u200db`},
		{"word-joiner", "a\u2060b", `a\u2060b`},
		{"soft-hyphen", "ad\u00admin", `ad\u00admin`},
		{"bom", "\ufeffpackage main", `\ufeffpackage main`},
		{"rtl-override", "x\u202eyz", `x\u202eyz`},
		{"rtl-mark", "a\u200fb", `a\u200fb`},
		{"isolate", "a\u2066b\u2069", `a\u2066b\u2069`},
		{"arabic-letter-mark", "a\u061cb", `a\u061cb`},
		{"tag-characters", "ok\U000e0041\U000e0042\U000e007f", `ok\U000e0041\U000e0042\U000e007f`},
		{"variation-selectors", "a\ufe0f\U000e0100", `a\ufe0f\U000e0100`},
		{"hangul-filler", "a\u3164b", `a\u3164b`},
		{"c0-del-c1", "a\x1b[2J\x7f\u0085\u009b", `a\x1b[2J\x7f\u0085\u009b`},
		{"lone-cr", "evil\rgood", `evil\x0dgood`},
		{"invalid-utf8", "a\xffb", `a\xffb`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Visible(tt.in); got != tt.want {
				t.Errorf("Visible(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
