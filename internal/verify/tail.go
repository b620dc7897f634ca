package verify

import (
	"bytes"
	"unicode/utf8"
)

// TailBytes bounds each kept output stream of a check.
const TailBytes = 4 << 10

// tail keeps the last max bytes written to it. It sits behind the
// redacting writer, so it only ever holds redacted text (R-053: bounding
// sees redacted text).
type tail struct {
	max   int
	buf   []byte
	total int64
}

func newTail(max int) *tail { return &tail{max: max} }

// Write keeps the last max bytes; it never fails.
func (t *tail) Write(p []byte) (int, error) {
	t.total += int64(len(p))
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		// Compact only when the buffer has grown to twice the bound, so
		// many small writes stay linear.
		if len(t.buf) >= 2*t.max {
			t.buf = append(t.buf[:0], t.buf[over:]...)
		}
	}
	return len(p), nil
}

// String returns the kept text. When earlier output was dropped it starts
// at the next line (or rune) boundary after the cut, marked with "…\n".
func (t *tail) String() string {
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	if t.total <= int64(len(b)) {
		return string(b)
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)/2 {
		b = b[i+1:]
	}
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return "…\n" + string(b)
}
