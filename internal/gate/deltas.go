package gate

import (
	"bytes"
	"encoding/json"
)

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
// reports whether the window then carries the credential or a format;
// esc reports that p has an escape that could spell a credential
// character (from [leakCheck.scan]): the pieces are then decoded first.
func (w *deltaWindow) leaks(c leakCheck, p []byte, esc bool) bool {
	if !bytes.Contains(p, []byte(`delta`)) {
		return false // no delta event in these lines
	}
	keep := max(len(c.key), formatTail)
	for line := range bytes.Lines(p) {
		at, vals := deltaValues(line)
		for i, s := range vals {
			if at[i] < 0 {
				continue
			}
			if esc {
				s = clientString(s)
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
// occurrence in line (-1 if none) and that field's raw string value, in
// one pass: every field ends in `":"`, so each occurrence ends at an
// occurrence of `":"` and is found by comparing the bytes before it. In
// JSON a `":"` ends a key and opens a string value, which cannot hold a
// bare quote, so the search resumes after that value: for every line a
// client can parse, the same first indexes as one bytes.Index per field,
// and each byte is searched once (issue 18 performance: the separate
// searches were a fifth of the check, and rescanning the text a tenth).
// A line that ends inside a string stops the search there.
func deltaValues(line []byte) (at [4]int, vals [4][]byte) {
	at = [4]int{-1, -1, -1, -1}
	left := len(deltaFields)
	for off := 0; left > 0; {
		j := bytes.Index(line[off:], []byte(`":"`))
		if j < 0 {
			break
		}
		end := off + j + 3 // just past this `":"`: the value's first byte
		s, ok := stringAt(line, end)
		for i, f := range deltaFields {
			if at[i] < 0 && end >= len(f) && bytes.Equal(line[end-len(f):end], f) {
				if ok {
					at[i], vals[i] = end-len(f), s
				}
				left--
			}
		}
		if !ok {
			break
		}
		off = end + len(s) + 1 // past the value's closing quote
	}
	return at, vals
}

// clientString returns the raw JSON string s as the client reads it when
// s has an escape that could spell a credential character (\u00XX, \/):
// the window must join the pieces the client joins, and a key piece
// written "sk\u002dant…" is "sk-ant…" there. Other strings are returned
// as they are (no allocation); one that does not decode is returned raw
// (the client drops its line).
func clientString(s []byte) []byte {
	if !escaped(s) {
		return s
	}
	var v string
	if json.Unmarshal(append(append([]byte{'"'}, s...), '"'), &v) != nil {
		return s
	}
	return []byte(v)
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
// up to its closing quote: the first quote after an even run of
// backslashes (found with the vectorised [bytes.IndexByte]).
func stringAt(line []byte, start int) ([]byte, bool) {
	v := line[start:]
	for off := 0; ; {
		j := bytes.IndexByte(v[off:], '"')
		if j < 0 {
			return nil, false
		}
		j += off
		k := j
		for k > 0 && v[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return v[:j], true
		}
		off = j + 1
	}
}
