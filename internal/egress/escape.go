package egress

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeEscapes returns the JSON text b with every string escape decoded
// in place — \uXXXX (a UTF-16 surrogate pair as one character, a lone
// surrogate as U+FFFD, as encoding/json decodes it), \/, \", \\ and the
// control escapes — and everything else kept as it is: the characters a
// decoder of b reads, in the order they stand. Unlike a decode into a
// map, every member of an object is kept, a repeated one too: decoders
// differ on which copy of a repeated key wins, and the bytes of every
// copy leave. An escape that is not one is kept. b without a backslash
// is returned itself.
func DecodeEscapes(b []byte) []byte {
	i := bytes.IndexByte(b, '\\')
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i >= 0 {
		out = append(out, b[:i]...)
		r, n := escape(b[i:])
		if n == 0 {
			out, n = append(out, '\\'), 1
		} else {
			out = utf8.AppendRune(out, r)
		}
		b = b[i+n:]
		i = bytes.IndexByte(b, '\\')
	}
	return append(out, b...)
}

// escape decodes the escape at the start of b (b[0] is a backslash) and
// returns its character and length, or n = 0 when it is none.
func escape(b []byte) (r rune, n int) {
	if len(b) < 2 {
		return 0, 0
	}
	switch b[1] {
	case '"', '\\', '/':
		return rune(b[1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
	default:
		return 0, 0
	}
	r, ok := hex4(b[2:])
	if !ok {
		return 0, 0
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
		if lo, ok := hex4(b[8:]); ok {
			if p := utf16.DecodeRune(r, lo); p != utf8.RuneError {
				return p, 12
			}
		}
	}
	return utf8.RuneError, 6
}

// hex4 reads the four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
