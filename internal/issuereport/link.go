package issuereport

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// link returns the prefilled new-issue URL, at most MaxURL bytes: when the
// encoded body is too long it is cut (at a rune boundary) with a note, the
// full text staying in the report (GitHub rejects very long URLs).
func link(title, body string) string {
	const note = "\n\n[…cut to fit the link; paste the full report from the tool result]"
	for n := len(body); ; n = n * 3 / 4 {
		b := body
		if n < len(body) {
			b = cutRunes(body, n) + note
		}
		u := NewIssueURL + "?title=" + escape(title) + "&body=" + escape(b)
		if len(u) <= MaxURL || n == 0 {
			return u
		}
	}
}

// escape is query escaping with %20 for spaces (unambiguous everywhere).
func escape(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }

func cutRunes(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
