package lineage

import "unicode/utf16"

// unescape decodes the JSON escape at the start of b, including a UTF-16
// surrogate pair, and returns the rune and the escape's length.
func unescape(b []byte) (rune, int, bool) {
	if len(b) < 2 {
		return 0, 0, false
	}
	switch b[1] {
	case '"', '\\', '/':
		return rune(b[1]), 2, true
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'u':
		return unicodeEscape(b)
	}
	return 0, 0, false
}

func unicodeEscape(b []byte) (rune, int, bool) {
	r, ok := hex4(b, 2)
	if !ok {
		return 0, 0, false
	}
	if utf16.IsSurrogate(r) && len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
		if lo, ok := hex4(b, 8); ok {
			if p := utf16.DecodeRune(r, lo); p != 0xFFFD {
				return p, 12, true
			}
		}
	}
	if utf16.IsSurrogate(r) {
		return 0xFFFD, 6, true // a lone surrogate decodes to U+FFFD, as encoding/json does
	}
	return r, 6, true
}

func hex4(b []byte, i int) (rune, bool) {
	if len(b) < i+4 {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}
