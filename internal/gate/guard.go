package gate

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/redact"
)

// Nothing real comes back (issue 18 scope 2): every byte the gate returns
// to the client — status line aside — is checked for the grant's real
// credential (literally) and for the answer profile's credential formats
// (internal/redact) before it is released: response headers and trailers,
// error bodies of any status, whole JSON bodies and each line of an SSE
// stream (so an Anthropic `event: error` or an OpenAI `error` /
// `response.failed` event inside a 200 stream is checked like any other).
// A match withholds the bytes: a whole body is replaced by a gate error,
// a stream ends with one generic error event. Either way the exchange is
// charged its reservation and a security event is recorded.

// answerFormats is the answer-profile redactor for provider traffic
// (redact.NewTraffic, without the agent's own phantom): what it would
// change is a credential format.
var answerFormats = redact.NewTraffic()

// leakCheck finds the real credential or a credential format in bytes.
type leakCheck struct {
	key []byte // the grant's real credential; empty when none was resolved
}

// in reports whether p carries the credential or a credential format,
// also after JSON unescaping when p uses \u or \/ escapes (a key written
// as "sk\u002dant…" reads whole to the client).
func (c leakCheck) in(p []byte) bool {
	if c.raw(p) {
		return true
	}
	if !escaped(p) {
		return false
	}
	for line := range bytes.Lines(p) {
		if escaped(line) && c.raw(unescaped(line)) {
			return true
		}
	}
	// Every escape decoded in place: a line that is not one JSON value
	// (a pretty-printed body's, which a JSON client reads whole), and a
	// member a later one of the same name shadows in the decode above
	// (red team rt5).
	return c.raw(egress.DecodeEscapes(p))
}

// asStream reports whether p, read as an SSE client reads it — a lone
// CR, CRLF and LF each end a line; delta text joined per block — carries
// a leak: for a body not labelled text/event-stream, which a streaming
// request's SDK reads as SSE all the same (the Anthropic and OpenAI SDKs
// choose the reader from the request's "stream", not the label).
func (c leakCheck) asStream(p []byte) bool {
	if bytes.IndexByte(p, '\r') >= 0 {
		p = bytes.ReplaceAll(bytes.ReplaceAll(p, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	}
	var w deltaWindow
	return c.in(p) || w.leaks(c, p)
}

// whole is [leakCheck.in] for a whole body, also decoded as the one JSON
// value it is: a pretty-printed body's lines are not JSON alone, so in
// left a JSON-escaped key in it undecoded.
func (c leakCheck) whole(p []byte) bool {
	return c.in(p) || escaped(p) && json.Valid(p) && c.raw(unescaped(p))
}

// escaped reports whether p has a JSON escape that could spell an ASCII
// credential character (\u00XX) or a slash (\/): one search for the
// backslash instead of one per escape (code text is full of \" and \n).
func escaped(p []byte) bool {
	for i := 0; ; i++ {
		j := bytes.IndexByte(p[i:], '\\')
		if j < 0 {
			return false
		}
		i += j
		if rest := p[i+1:]; bytes.HasPrefix(rest, []byte("/")) || bytes.HasPrefix(rest, []byte("u00")) {
			return true
		}
	}
}

func (c leakCheck) raw(p []byte) bool {
	if len(c.key) > 0 && bytes.Contains(p, c.key) {
		return true
	}
	return answerFormats.Changes(p)
}

// unescaped returns the decoded strings of the JSON in line (an SSE data
// line or a whole body), one per line; a line that is not JSON is
// returned as it is.
func unescaped(line []byte) []byte {
	data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
	if !ok {
		data = line
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return line
	}
	var b bytes.Buffer
	egress.CollectStrings(v, &b)
	return b.Bytes()
}

// header reports whether any name or value of h carries a leak. Names
// and values are checked as lines of one text (a key or format cannot
// span a line end), so each search runs once per header block instead of
// once per field.
func (c leakCheck) header(h http.Header) bool {
	if len(h) == 0 {
		return false
	}
	var text, names []byte
	for name, vs := range h {
		text = append(append(text, name...), '\n')
		names = append(append(names, name...), '\n')
		for _, v := range vs {
			text = append(append(text, v...), '\n')
		}
	}
	return c.in(text) || c.folded(bytes.ToLower(names))
}

// folded reports whether header names, lower-cased, carry a leak: the
// transport canonicalises names ("X-Gk-Q7-…" for a key "gk-q7-…"), which
// hid the key from the literal search while a client recovers a
// lower-case key from it by lowering it.
func (c leakCheck) folded(lower []byte) bool {
	return len(c.key) > 0 && bytes.Contains(lower, bytes.ToLower(c.key)) || answerFormats.Changes(lower)
}

// guard releases an SSE body line by line, each line checked first. On
// a match, or a line longer than maxLine, it releases one generic error
// event instead and then ends the stream; at upstream EOF it checks the
// trailers, which the proxy copies after the body.
type guard struct {
	rc     io.ReadCloser
	resp   *http.Response
	check  leakCheck
	onLeak func(what string) // records the event; called at most once
	errEv  []byte            // the generic error event of the provider

	win  deltaWindow // the tail of the streamed delta strings
	buf  []byte      // from copyBufferPool; returned by Close
	pend []byte      // read, not yet checked (an incomplete line)
	ob   []byte      // backing store for out when pend was involved
	out  []byte      // checked, not yet returned
	err  error       // returned once out is drained
}

func (b *guard) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		b.fill()
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

// fill reads once from upstream and moves every complete line to out.
func (b *guard) fill() {
	if b.buf == nil {
		b.buf = copyBuffers{}.Get()
	}
	n, err := b.rc.Read(b.buf)
	data := b.buf[:n]
	if len(b.pend) > 0 || err != nil {
		b.pend = append(b.pend, data...)
		data = b.pend
	}
	// pend holds no LF: only the new bytes are searched (searching all of
	// data made a long line trickled a byte per read quadratic).
	cut := bytes.LastIndexByte(data[len(data)-n:], '\n') + 1
	if cut > 0 {
		cut += len(data) - n
	}
	if err != nil {
		cut = len(data)
	}
	switch {
	case len(data)-cut > maxLine:
		b.withhold("oversized response line")
		return
	case cut > 0 && b.check.in(data[:cut]):
		b.withhold("response body")
		return
	case cut > 0 && bareCR(data[:cut]):
		b.withhold("response line ending")
		return
	case cut > 0 && b.win.leaks(b.check, data[:cut]):
		b.withhold("response deltas")
		return
	}
	if len(b.pend) > 0 {
		b.ob = append(b.ob[:0], data[:cut]...)
		b.out = b.ob
		if cut > 0 { // else data is pend already: no copy per read
			b.pend = append(b.pend[:0], data[cut:]...)
		}
	} else {
		b.out = data[:cut]
		b.pend = append(b.pend, data[cut:]...)
	}
	if err != nil {
		b.err = err
		b.pend = nil
		if err == io.EOF && b.check.header(b.resp.Trailer) {
			clear(b.resp.Trailer)
			b.withhold("response trailer")
		}
	}
}

// bareCR reports whether p has a carriage return that does not start a
// CRLF. An SSE client ends a line at CR, LF or CRLF alike; the window
// reads LF-ended lines, so events ended by a lone CR would reach the
// client unread (providers never send one).
func bareCR(p []byte) bool {
	for i := 0; ; i++ {
		j := bytes.IndexByte(p[i:], '\r')
		if j < 0 {
			return false
		}
		i += j
		if i+1 == len(p) || p[i+1] != '\n' {
			return true
		}
	}
}

// withhold drops everything unreleased, releases the generic error event
// and ends the stream.
func (b *guard) withhold(what string) {
	b.onLeak(what)
	b.pend, b.out, b.err = nil, b.errEv, io.EOF
	clear(b.resp.Trailer)
}

// Close closes the upstream body and returns the read buffer; nothing
// reads the guard after Close.
func (b *guard) Close() error {
	if b.buf != nil {
		copyBuffers{}.Put(b.buf)
		b.buf, b.out = nil, nil
	}
	return b.rc.Close()
}

// errorEvent is the generic SSE error event each CLI understands:
// Anthropic's `event: error`, OpenAI Responses' `response.failed`.
func errorEvent(p Provider, reason string) []byte {
	msg := `coagent8 gate withheld the provider's answer: ` + reason
	if p == OpenAI {
		return []byte(`event: response.failed` + "\n" + `data: {"type":"response.failed","sequence_number":0,"response":{"id":"resp_coagent8_gate","object":"response","status":"failed","error":{"code":"server_error","message":"` +
			msg + `"},"output":[]}}` + "\n\n")
	}
	return []byte(`event: error` + "\n" + `data: {"type":"error","error":{"type":"api_error","message":"` + msg + `"}}` + "\n\n")
}
