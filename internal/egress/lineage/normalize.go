package lineage

import (
	"errors"
	"unicode/utf8"
)

// errSyntax reports a body that is not well-formed JSON text where JSON
// was expected: its strings cannot be scanned, so its lineage is unknown.
var errSyntax = errors.New("lineage: body is not well-formed JSON")

// norm is normalized text: bytes, their segments, and (when spans are
// wanted) the raw byte range each normalized byte came from.
type norm struct {
	b      []byte
	segs   []int32 // start of each segment in b; segment i ends at segs[i+1]
	start  []int32 // raw offset of the unit that produced b[i] (spans only)
	end    []int32 // raw end of that unit (spans only)
	spans  bool
	line   bool    // at a line start: a number prefix may follow
	digits []rune  // pending line-start digits
	dOff   []int32 // their raw offsets
	dEnd   []int32
}

func (n *norm) reset(spans bool) {
	n.b, n.segs, n.start, n.end = n.b[:0], n.segs[:0], n.start[:0], n.end[:0]
	n.spans = spans
}

func (n *norm) segment() {
	n.flush()
	n.segs = append(n.segs, int32(len(n.b)))
	n.line = true
}

// put feeds one decoded rune whose raw encoding is [off, end).
func (n *norm) put(r rune, off, end int) {
	if !n.line && r > ' ' && r < 0x7f && !n.spans {
		n.b = append(n.b, byte(r)) // fast path: printable ASCII mid-line
		return
	}
	switch {
	case r == '\n':
		n.flush()
		n.line = true
	case n.line && r >= '0' && r <= '9' && len(n.digits) < 10:
		n.digits = append(n.digits, r)
		n.dOff, n.dEnd = append(n.dOff, int32(off)), append(n.dEnd, int32(end))
	case n.line && len(n.digits) > 0 && (r == '\t' || r == '→'):
		n.digits, n.dOff, n.dEnd = n.digits[:0], n.dOff[:0], n.dEnd[:0]
		n.line = false
	case isSpace(r):
		if len(n.digits) > 0 {
			n.flush()
		}
	default:
		n.flush()
		n.emit(r, off, end)
	}
}

// flush emits pending digits that turned out not to be a line prefix.
func (n *norm) flush() {
	for i, d := range n.digits {
		n.emit(d, int(n.dOff[i]), int(n.dEnd[i]))
	}
	n.digits, n.dOff, n.dEnd = n.digits[:0], n.dOff[:0], n.dEnd[:0]
	n.line = false
}

func (n *norm) emit(r rune, off, end int) {
	before := len(n.b)
	n.b = utf8.AppendRune(n.b, r)
	if !n.spans {
		return
	}
	for range len(n.b) - before {
		n.start, n.end = append(n.start, int32(off)), append(n.end, int32(end))
	}
}

func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\r', '\v', '\f', 0x85, 0xA0, 0x2028, 0x2029:
		return true
	}
	return false
}

// text normalizes plain text (a file) as one segment.
func (n *norm) text(b []byte) {
	n.segment()
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		n.put(r, i, i+size)
		i += size
	}
	n.flush()
}

// json normalizes the contents of every string in a JSON text, one
// segment per string. Bytes outside strings are structure and skipped.
func (n *norm) json(b []byte) error {
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end, err := n.str(b, i+1)
		if err != nil {
			return err
		}
		i = end
	}
	n.flush()
	return nil
}

// str decodes the string starting after the quote at i-1 and returns the
// index of its closing quote.
func (n *norm) str(b []byte, i int) (int, error) {
	n.segment()
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			n.flush()
			return i, nil
		case c == '\\':
			r, size, ok := unescape(b[i:])
			if !ok {
				return 0, errSyntax
			}
			n.put(r, i, i+size)
			i += size
		case c < 0x20:
			return 0, errSyntax
		case c > ' ' && c < 0x7f && !n.line && !n.spans:
			j := plainRun(b, i) // fast path, as in put: copy a run of plain ASCII at once
			n.b = append(n.b, b[i:j]...)
			i = j
		case c < 0x80:
			n.put(rune(c), i, i+1)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			n.put(r, i, i+size)
			i += size
		}
	}
	return 0, errSyntax
}

// plain marks printable ASCII other than space, quote and backslash.
var plain = func() (t [256]bool) {
	for c := '!'; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainRun returns the end of the run of plain bytes starting at i.
func plainRun(b []byte, i int) int {
	for i < len(b) && plain[b[i]] {
		i++
	}
	return i
}
