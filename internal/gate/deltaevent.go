package gate

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// A delta event is read the way the client reads it (issue 18 scope 2,
// red team 2026-12-02): the SSE event's data lines joined with "\n", then
// decoded as JSON — whitespace anywhere, escaped key names, the last of
// duplicate keys (JSON.parse, serde_json's maps) — and its streamed strings
// taken from the fields the CLIs append: Anthropic delta.text,
// delta.thinking, delta.partial_json and a block's opening
// content_block.text/.thinking; OpenAI's delta string. Each belongs to
// the content block the client appends it to: Anthropic index, OpenAI
// output_index with content_index and summary_index.
//
// quickEvent reads the canonical shape providers send (no insignificant
// whitespace, no duplicate keys, no \u or \/ escapes, objects at most two
// deep, no arrays but the empty one) in one pass without allocating;
// anything else is decoded by encoding/json ([slowEvent]), whose result
// is the same where both apply (FuzzQuickEvent).

// blockKey names the content block a piece is appended to; -1 is absent.
type blockKey [3]int64

// deltaEvent is what one event adds to the client's text.
type deltaEvent struct {
	block blockKey
	// odd is set when a member naming the block is not a non-negative
	// integer, or both "index" and "output_index" are present: clients
	// differ on which block that is (content[event.index] reads "0" as 0,
	// .at() reads a missing index as 0, content[0.5] is none), so the
	// window cannot keep the block's text as the client does.
	odd    bool
	pieces [][]byte // in the order the fields appear; raw JSON string bodies (quick) or decoded (slow)
	arr    [4][]byte
}

func (e *deltaEvent) reset() {
	e.block = blockKey{-1, -1, -1}
	e.odd = false
	e.arr = [4][]byte{}
	e.pieces = e.arr[:0]
}

// quickEvent fills e from payload if it has the canonical shape and
// reports whether it did.
func quickEvent(payload []byte, e *deltaEvent) bool {
	e.reset()
	if !plainText(payload) {
		return false
	}
	q := quick{b: payload}
	return q.object(0, nil, e) && q.i == len(q.b)
}

// quick is a cursor over one payload.
type quick struct {
	b []byte
	i int
}

// object reads an object at depth (0 top, 1 nested, 2 innermost) that is
// the value of member parent ("" at the top).
func (q *quick) object(depth int, parent []byte, e *deltaEvent) bool {
	if !q.byte('{') {
		return false
	}
	var seen [16][]byte
	n := 0
	if q.byte('}') {
		return true
	}
	for {
		key, ok := q.str() // raw bytes name a member: with plainText's escapes, equal names are equal bytes
		if !ok || n == len(seen) {
			return false
		}
		for _, k := range seen[:n] {
			if bytes.Equal(k, key) {
				return false // duplicate: the slow path keeps the last, as clients do
			}
		}
		seen[n] = key
		n++
		if !q.byte(':') || !q.value(depth, parent, key, e) {
			return false
		}
		if q.byte('}') {
			return true
		}
		if !q.byte(',') {
			return false
		}
	}
}

func (q *quick) byte(c byte) bool {
	if q.i < len(q.b) && q.b[q.i] == c {
		q.i++
		return true
	}
	return false
}

// str reads a string (the payload passed [plainText]) and returns its
// raw body.
func (q *quick) str() ([]byte, bool) {
	if !q.byte('"') {
		return nil, false
	}
	s, ok := stringAt(q.b, q.i)
	if !ok {
		return nil, false
	}
	q.i += len(s) + 1
	return s, true
}

// value reads the value of member key of an object at depth.
func (q *quick) value(depth int, parent, key []byte, e *deltaEvent) bool {
	if q.i >= len(q.b) {
		return false
	}
	switch c := q.b[q.i]; {
	case c == '"':
		if depth == 0 && indexKey(key) {
			return false // a string naming the block: the slow path marks it odd
		}
		s, ok := q.str()
		if ok {
			e.add(depth, parent, key, s)
		}
		return ok
	case c == '{':
		return depth < 2 && q.object(depth+1, key, e)
	case c == '-' || c >= '0' && c <= '9':
		start := q.i
		if !q.number() {
			return false
		}
		if depth == 0 {
			return e.index(key, q.b[start:q.i])
		}
		return true
	default:
		// An empty array holds no string, as a literal holds none:
		// OpenAI sends "logprobs":[] on every text delta (issue 18). An
		// index that is not a number is not the canonical shape.
		for _, lit := range []string{"true", "false", "null", "[]"} {
			if bytes.HasPrefix(q.b[q.i:], []byte(lit)) {
				q.i += len(lit)
				return depth > 0 || !indexKey(key)
			}
		}
		return false // another array, or not JSON
	}
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (q *quick) number() bool {
	q.byte('-')
	if !q.byte('0') && q.digits() == 0 {
		return false
	}
	if q.byte('.') && q.digits() == 0 {
		return false
	}
	if q.byte('e') || q.byte('E') {
		if !q.byte('+') {
			q.byte('-')
		}
		return q.digits() > 0
	}
	return true
}

func (q *quick) digits() int {
	n := 0
	for q.i < len(q.b) && q.b[q.i] >= '0' && q.b[q.i] <= '9' {
		q.i++
		n++
	}
	return n
}

// plainText reports whether payload can be read by the quick path: valid
// UTF-8 (encoding/json would replace the rest), no control byte (JSON
// allows none, in a string or out), and every backslash one of the
// escapes that decode to one byte no raw string holds: \" \\ \b \f \n \r \t
// (a \u or \/ escape is decoded by the slow path). One pass each over
// the payload, not one per string.
func plainText(payload []byte) bool {
	if !utf8.Valid(payload) || hasControl(payload) {
		return false
	}
	for i := 0; ; i += 2 {
		j := bytes.IndexByte(payload[i:], '\\')
		if j < 0 {
			return true
		}
		i += j
		if i+1 >= len(payload) || bytes.IndexByte([]byte(`"\bfnrt`), payload[i+1]) < 0 {
			return false
		}
	}
}

// hasControl reports whether s has a byte below 0x20, eight bytes at a
// time: (x - 0x20…) & ^x & 0x80… is non-zero iff some byte of x is below
// 0x20 (a borrow only ever starts at such a byte).
func hasControl(s []byte) bool {
	const lo, hi = 0x2020202020202020, 0x8080808080808080
	for len(s) >= 8 {
		x := binary.LittleEndian.Uint64(s)
		if (x-lo)&^x&hi != 0 {
			return true
		}
		s = s[8:]
	}
	for _, c := range s {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// indexKey reports whether a top-level member names the content block.
func indexKey(key []byte) bool {
	switch string(key) {
	case "index", "output_index", "content_index", "summary_index":
		return true
	}
	return false
}

// index records a top-level number member that names the block; one that
// is not a plain integer leaves the event to the slow path.
func (e *deltaEvent) index(key, num []byte) bool {
	if !indexKey(key) {
		return true
	}
	v, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || v < 0 {
		return false
	}
	switch string(key) {
	case "index", "output_index":
		if e.block[0] >= 0 {
			return false // both: which one a client uses is its own choice
		}
		e.block[0] = v
	case "content_index":
		e.block[1] = v
	default:
		e.block[2] = v
	}
	return true
}

// add records a string member that the client appends to its block.
func (e *deltaEvent) add(depth int, parent, key []byte, s []byte) {
	k, p := string(key), string(parent)
	switch {
	case depth == 0 && k == "delta", // OpenAI
		depth == 1 && p == "delta" && (k == "text" || k == "thinking" || k == "partial_json"),
		depth == 1 && p == "content_block" && (k == "text" || k == "thinking"):
		e.pieces = append(e.pieces, s)
	}
}

// slowEvent decodes payload as a client does and fills e; false when it
// is not one JSON object (the client drops the event).
func slowEvent(payload []byte, e *deltaEvent) bool {
	e.reset()
	// Numbers are kept as text: encoding/json refuses one beyond
	// float64's range (1e999) in an any, where JSON.parse (Claude Code)
	// reads Infinity and shows the event's text.
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if dec.Decode(&v) != nil || v == nil {
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		return false // trailing data: not one JSON value
	}
	_, hasIndex := v["index"]
	if _, hasOutput := v["output_index"]; hasIndex && hasOutput {
		e.odd = true
	}
	for _, m := range []struct {
		key  string
		slot int
	}{{"index", 0}, {"output_index", 0}, {"content_index", 1}, {"summary_index", 2}} {
		raw, ok := v[m.key]
		if !ok {
			continue
		}
		n, ok := blockNumber(raw)
		e.odd = e.odd || !ok
		e.block[m.slot] = n
	}
	switch d := v["delta"].(type) {
	case string:
		e.pieces = append(e.pieces, []byte(d))
	case map[string]any:
		e.strings(d, "text", "thinking", "partial_json")
	}
	if cb, ok := v["content_block"].(map[string]any); ok {
		e.strings(cb, "text", "thinking")
	}
	return true
}

// blockNumber is a decoded JSON member naming a block, as the index every
// client computes from it; false when clients may differ: not a number,
// negative, or not a whole number (1.0 and 1e0 are 1 for all of them).
func blockNumber(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return -1, false
	}
	f, err := n.Float64()
	if err != nil || f < 0 || f != math.Trunc(f) || f > 1<<53 {
		return -1, false
	}
	return int64(f), true
}

// strings appends the string members of m named in keys (a map has no
// order: every one is checked, in this order).
func (e *deltaEvent) strings(m map[string]any, keys ...string) {
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			e.pieces = append(e.pieces, []byte(s))
		}
	}
}
