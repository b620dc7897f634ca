package gate

import "bytes"

// A streamed answer reaches the client in pieces: Anthropic text,
// thinking and tool-input deltas, OpenAI output-text, reasoning and
// argument deltas. The client concatenates them, so a credential split
// across two deltas is whole on the client's side although no single
// line carries it. deltaWindow reads each event as the client does
// (deltaevent.go), keeps the tail of each content block's concatenated
// strings and checks each new piece together with its block's tail,
// before the piece is released: the grant's real key then never reaches
// the client whole
// (its first pieces may have). The real key is searched in a tail as long
// as the key, exactly; credential formats in the last formatTail bytes
// plus the piece, checked as if the stream ended there — a format whose
// every prefix up to 64 bytes is no match by itself (a PEM block, a long
// JWT) can still pass in pieces (not claimed; docs/PERFORMANCE.md).

// formatTail is the context the format check keeps (bytes): the
// one-shot scan of each piece with it costs about a microsecond.
const formatTail = 64

// maxBlocks bounds the content blocks one stream keeps a tail for; a
// stream with more is withheld (a provider's answer has a few dozen).
const maxBlocks = 4096

// deltaWindow is the rolling tail of each content block's streamed
// strings in one stream, and the SSE event being read.
type deltaWindow struct {
	blocks map[blockKey]*blockTail
	last   blockKey // the block of the previous piece, and its tail
	lastT  *blockTail
	ev     deltaEvent
	data   []byte // the current event's data lines, joined as the client joins them
	first  []byte // or its only data line so far, still in the caller's buffer
	lines  int    // data lines of the current event so far
	// undoT is the block the current event appended to and undo its tail
	// as it was before (undoT nil: none): a further data line of the
	// event makes the client read the event anew, so what it added is void.
	undoT *blockTail
	undo  []byte
	buf   []byte
	begun bool // the stream's first line was read
}

// blockTail is the last max(len(key), formatTail) bytes of a block.
type blockTail struct{ tail []byte }

// leaks reads the lines in p as the client's SSE parser does, appends
// each delta event's strings to its block's tail and reports whether a
// tail then carries the credential or a format (or an event or the stream
// exceeds its bound). A line that ends an event, or a data line whose
// event is not yet one JSON object, adds nothing.
func (w *deltaWindow) leaks(c leakCheck, p []byte) bool {
	defer w.keep()
	for line := range bytes.Lines(p) {
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if !w.begun {
			// A client drops a byte order mark that starts the stream;
			// left on, it hid the first line's "data:" from the window.
			line, w.begun = bytes.TrimPrefix(line, []byte("\uFEFF")), true
		}
		if len(line) == 0 {
			w.lines, w.undoT, w.first = 0, nil, nil // the event is dispatched
			continue
		}
		payload, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue // event:, id:, retry: and comments carry no text
		}
		if w.dataLine(c, bytes.TrimPrefix(payload, []byte(" "))) {
			return true
		}
	}
	return false
}

// keep copies the current event's first data line out of the caller's
// buffer when the event has not ended in it.
func (w *deltaWindow) keep() {
	if w.first != nil {
		w.data, w.first = append(w.data[:0], w.first...), nil
	}
}

// dataLine adds one data line to the current event.
func (w *deltaWindow) dataLine(c leakCheck, payload []byte) bool {
	w.lines++
	if w.lines == 1 {
		w.first = payload // copied by keep only if the event goes on past p
		if !quickEvent(payload, &w.ev) && !slowEvent(payload, &w.ev) {
			return false // not one JSON object yet: the event may go on
		}
		return w.apply(c)
	}
	if w.undoT != nil {
		w.undoT.tail = append(w.undoT.tail[:0], w.undo...)
		w.undoT = nil
	}
	w.keep()
	w.data = append(append(w.data, '\n'), payload...)
	if len(w.data) > maxLine {
		return true // an event no client reads whole
	}
	if !slowEvent(w.data, &w.ev) {
		return false
	}
	// Its lines were checked alone, where a JSON escape is not decoded
	// (no line is JSON by itself): the client reads every string of
	// the event decoded, not only the delta pieces.
	if escaped(w.data) && c.raw(unescaped(w.data)) {
		return true
	}
	return w.apply(c)
}

// apply appends the event's pieces to its block's tail, checking each.
func (w *deltaWindow) apply(c leakCheck) bool {
	if len(w.ev.pieces) == 0 {
		return false
	}
	if w.ev.odd || w.ev.block[0] < 0 {
		// Text of no block every client agrees on (providers always name
		// it): the window cannot join it as the client does.
		return true
	}
	bt := w.lastT
	if bt == nil || w.ev.block != w.last {
		if w.blocks == nil {
			w.blocks = map[blockKey]*blockTail{}
		}
		if bt = w.blocks[w.ev.block]; bt == nil {
			if len(w.blocks) >= maxBlocks {
				return true
			}
			bt = &blockTail{}
			w.blocks[w.ev.block] = bt
		}
		w.last, w.lastT = w.ev.block, bt
	}
	w.undoT, w.undo = bt, append(w.undo[:0], bt.tail...)
	keep := max(len(c.key), formatTail)
	for _, s := range w.ev.pieces {
		w.buf = append(append(w.buf[:0], bt.tail...), s...)
		if w.spans(c, len(s)) {
			return true
		}
		bt.tail = append(bt.tail[:0], w.buf[max(0, len(w.buf)-keep):]...)
	}
	return false
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
