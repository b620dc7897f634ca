package gate

import "bytes"

// A streamed answer reaches the client in pieces: Anthropic text,
// thinking and tool-input deltas, OpenAI output-text, reasoning and
// argument deltas. The client concatenates them, so a credential split
// across two deltas is whole on the client's side although no single
// line carries it. deltaWindow keeps the tail of the concatenated delta
// strings and checks each new piece together with it, before the piece
// is released: the grant's real key then never reaches the client whole
// (its first pieces may have). The real key is searched in a tail as long
// as the key, exactly; credential formats in the last formatTail bytes
// plus the piece, checked as if the stream ended there — a format whose
// every prefix up to 64 bytes is no match by itself (a PEM block, a long
// JWT) can still pass in pieces (not claimed; docs/PERFORMANCE.md).

// formatTail is the context the format check keeps (bytes): the
// one-shot scan of each piece with it costs about a microsecond.
const formatTail = 64

// deltaFields are the JSON string fields that carry streamed content.
var deltaFields = [][]byte{[]byte(`"text":"`), []byte(`"delta":"`), []byte(`"partial_json":"`), []byte(`"thinking":"`)}

// deltaWindow is the rolling tail of one stream's delta strings.
type deltaWindow struct {
	tail []byte // the last max(len(key), formatTail) bytes
	buf  []byte
}

// leaks appends the delta strings of the lines in p to the window and
// reports whether the window then carries the credential or a format.
func (w *deltaWindow) leaks(c leakCheck, p []byte) bool {
	if !bytes.Contains(p, []byte(`delta`)) {
		return false // no delta event in these lines
	}
	keep := max(len(c.key), formatTail)
	for line := range bytes.Lines(p) {
		at := deltaValues(line)
		for i, f := range deltaFields {
			if at[i] < 0 {
				continue
			}
			s, ok := stringAt(line, at[i]+len(f))
			if !ok {
				continue
			}
			w.buf = append(append(w.buf[:0], w.tail...), s...)
			if w.spans(c, len(s)) {
				return true
			}
			w.tail = append(w.tail[:0], w.buf[max(0, len(w.buf)-keep):]...)
		}
	}
	return false
}

// deltaValues returns, per [deltaFields] entry, the index of its first
// occurrence in line (-1 if none), in one pass: every field ends in
// `":"`, so each occurrence ends at an occurrence of `":"` and is found by
// comparing the bytes before it — the same first indexes as one
// bytes.Index per field, without rescanning the line four times (issue 18
// performance: the separate searches were a fifth of the check).
func deltaValues(line []byte) (at [4]int) {
	at = [4]int{-1, -1, -1, -1}
	left := len(deltaFields)
	for off := 0; left > 0; {
		j := bytes.Index(line[off:], []byte(`":"`))
		if j < 0 {
			break
		}
		end := off + j + 3 // just past this `":"`
		for i, f := range deltaFields {
			if at[i] < 0 && end >= len(f) && bytes.Equal(line[end-len(f):end], f) {
				at[i] = end - len(f)
				left--
			}
		}
		off += j + 1 // occurrences may overlap (`":":"`)
	}
	return at
}

// spans checks w.buf (tail, then a piece of n bytes) for what spans the
// boundary — the piece alone was checked with its line: the key anywhere
// in it, formats around the boundary (formatTail bytes either side,
// scanned as if the stream ended there, so a format's prefix counts).
func (w *deltaWindow) spans(c leakCheck, n int) bool {
	if len(c.key) > 0 && bytes.Contains(w.buf, c.key) {
		return true
	}
	at := len(w.buf) - n
	f := w.buf[max(0, at-formatTail):min(len(w.buf), at+formatTail)]
	return answerFormats.Changes(f)
}

// jsonString returns the raw (still escaped) value of the first string
// field opened by field in line.
func jsonString(line, field []byte) ([]byte, bool) {
	i := bytes.Index(line, field)
	if i < 0 {
		return nil, false
	}
	return stringAt(line, i+len(field))
}

// stringAt returns the raw JSON string whose first byte is line[start],
// up to its closing quote.
func stringAt(line []byte, start int) ([]byte, bool) {
	v := line[start:]
	for j := 0; j < len(v); j++ {
		switch v[j] {
		case '\\':
			j++
		case '"':
			return v[:j], true
		}
	}
	return nil, false
}
