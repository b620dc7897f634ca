package jsonl

import (
	"errors"
	"unicode/utf8"
)

// maxNumber is the longest number kept; a longer one is out of protocol for
// every CLI coagent8 drives and becomes 0 (CutValues).
const maxNumber = 64

// maxKey is how many decoded bytes of an object key are kept.
const maxKey = 256

var errSyntax = errors.New("invalid JSON")

// reducer copies one JSON value from s to out, shortening strings and
// dropping what does not fit (see the package doc). It recurses only into
// values it keeps, at most Limits.Depth deep; dropped values are skipped
// iteratively, so hostile nesting costs no stack.
type reducer struct {
	s   *source
	lim Limits
	out []byte
	cut Cut
}

// document reads one value and then only white space to the line's end.
func (d *reducer) document() error {
	c, ok := d.space()
	if !ok {
		return errSyntax
	}
	if err := d.value(c, 0, true); err != nil {
		return err
	}
	if _, ok := d.space(); ok {
		return errSyntax
	}
	return nil
}

// space returns the next byte that is not JSON white space.
func (d *reducer) space() (byte, bool) {
	for {
		c, ok := d.s.next()
		if !ok || (c != ' ' && c != '\t' && c != '\r') {
			return c, ok
		}
	}
}

// room reports whether another member or element may be kept.
func (d *reducer) room() bool { return len(d.out) < d.lim.Budget }

func (d *reducer) value(c byte, depth int, keep bool) error {
	switch {
	case c == '"':
		return d.str(keep, d.lim.String, CutStrings)
	case c == '{' || c == '[':
		if !keep {
			return d.skipContainer(c)
		}
		return d.container(c, depth)
	case c == 't' || c == 'f' || c == 'n':
		return d.literal(c, keep)
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number(c, keep)
	}
	return errSyntax
}

// container copies an object or array, dropping members past the budget
// or below the depth limit (CutValues).
func (d *reducer) container(open byte, depth int) error {
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	d.out = append(d.out, open)
	c, ok := d.space()
	if !ok {
		return errSyntax
	}
	for kept := 0; c != closer; {
		keep := depth+1 < d.lim.Depth && d.room()
		if !keep {
			d.cut |= CutValues
		}
		if err := d.member(c, open == '{', keep, kept > 0, depth); err != nil {
			return err
		}
		if keep {
			kept++
		}
		if c, ok = d.space(); !ok || (c != ',' && c != closer) {
			return errSyntax
		}
		if c == ',' {
			if c, ok = d.space(); !ok || c == closer {
				return errSyntax
			}
		}
	}
	d.out = append(d.out, closer)
	return nil
}

// member copies (or skips) one element, or one key and its value,
// starting at c; comma says a kept member precedes it.
func (d *reducer) member(c byte, object, keep, comma bool, depth int) error {
	if keep && comma {
		d.out = append(d.out, ',')
	}
	if object {
		if c != '"' {
			return errSyntax
		}
		// A shortened key is another key: a structural cut.
		if err := d.str(keep, maxKey, CutValues); err != nil {
			return err
		}
		if c, ok := d.space(); !ok || c != ':' {
			return errSyntax
		}
		if keep {
			d.out = append(d.out, ':')
		}
		var ok bool
		if c, ok = d.space(); !ok {
			return errSyntax
		}
	}
	return d.value(c, depth+1, keep)
}

// skipContainer consumes a dropped object or array with a depth counter.
func (d *reducer) skipContainer(open byte) error {
	for depth := 1; depth > 0; {
		c, ok := d.s.next()
		switch {
		case !ok:
			return errSyntax
		case c == '"':
			if err := d.str(false, 0, 0); err != nil {
				return err
			}
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

func (d *reducer) literal(c byte, keep bool) error {
	want := map[byte]string{'t': "true", 'f': "false", 'n': "null"}[c]
	for i := 1; i < len(want); i++ {
		if b, ok := d.s.next(); !ok || b != want[i] {
			return errSyntax
		}
	}
	if keep {
		d.out = append(d.out, want...)
	}
	return nil
}

// number copies a number of at most maxNumber bytes; a longer one is
// replaced by 0 (CutValues). Its grammar (RFC 8259 §6) is checked as it
// streams, so a dropped or replaced number is still a valid one.
func (d *reducer) number(c byte, keep bool) error {
	start, n, st := len(d.out), 0, numStart
	for {
		if st = numNext(st, c); st == numBad {
			return errSyntax
		}
		if keep && n < maxNumber {
			d.out = append(d.out, c)
		}
		n++
		var ok bool
		if c, ok = d.s.next(); !ok {
			break
		}
		if !numberByte(c) {
			d.s.unread()
			break
		}
	}
	if !numEnd[st] {
		return errSyntax
	}
	if keep && n > maxNumber {
		d.out = append(d.out[:start], '0')
		d.cut |= CutValues
	}
	return nil
}

func numberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// Number grammar states: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
type numState uint8

const (
	numBad      numState = iota
	numStart             // nothing yet
	numMinus             // "-"
	numZero              // integer part "0"
	numInt               // integer part [1-9][0-9]*
	numDot               // "."
	numFrac              // fraction digits
	numExp               // "e"
	numExpSign           // "e+" or "e-"
	numExpDigit          // exponent digits
)

// numEnd marks the states a number may end in.
var numEnd = [numExpDigit + 1]bool{numZero: true, numInt: true, numFrac: true, numExpDigit: true}

func numNext(st numState, c byte) numState {
	digit := c >= '0' && c <= '9'
	switch st {
	case numStart, numMinus:
		switch {
		case c == '-' && st == numStart:
			return numMinus
		case c == '0':
			return numZero
		case digit:
			return numInt
		}
	case numZero, numInt:
		switch {
		case digit && st == numInt:
			return numInt
		case c == '.':
			return numDot
		case c == 'e' || c == 'E':
			return numExp
		}
	case numDot, numFrac:
		switch {
		case digit:
			return numFrac
		case (c == 'e' || c == 'E') && st == numFrac:
			return numExp
		}
	case numExp:
		switch {
		case c == '+' || c == '-':
			return numExpSign
		case digit:
			return numExpDigit
		}
	case numExpSign, numExpDigit:
		if digit {
			return numExpDigit
		}
	}
	return numBad
}

// str copies a string (its opening quote already read), keeping at most
// limit decoded bytes; a shortened string sets kind. It never cuts inside
// an escape or a UTF-8 sequence, nor between the halves of a surrogate
// pair. keep=false consumes it.
func (d *reducer) str(keep bool, limit int, kind Cut) error {
	if keep {
		d.out = append(d.out, '"')
	}
	st := strState{clip: !keep, high: -1}
	for {
		d.run(&st, limit)
		c, ok := d.s.next()
		switch {
		case !ok || c < 0x20:
			return errSyntax
		case c == '"':
			if keep {
				d.out = append(d.out, '"')
			}
			return nil
		case c == '\\':
			if err := d.escape(&st, limit, kind); err != nil {
				return err
			}
		case c < utf8.RuneSelf:
			d.keep(&st, limit, kind, 1, false, c)
		case utf8.RuneStart(c):
			d.keep(&st, limit, kind, seqLen(c), false, c)
			st.cont = seqLen(c) - 1
		case st.cont > 0: // a continuation byte follows its lead's fate
			st.cont--
			if !st.clip {
				d.out = append(d.out, c)
			}
		default: // a stray one decodes as U+FFFD: a character of its own
			d.keep(&st, limit, kind, utf8.RuneLen(utf8.RuneError), false, c)
		}
	}
}

// run consumes, in one step, the plain ASCII bytes of a string (no quote,
// backslash or control character) that are buffered: copied while the
// string is kept and has room, skipped once it is clipped. The byte loop
// in str handles everything else.
func (d *reducer) run(st *strState, limit int) {
	s := d.s
	if s.back {
		return
	}
	b := s.buf
	n := len(b)
	if !st.clip {
		n = min(n, limit-st.decoded, d.lim.Budget-len(d.out))
	}
	i := 0
	for i < n && plain[b[i]] {
		i++
	}
	if i == 0 {
		return
	}
	if !st.clip {
		d.out = append(d.out, b[:i]...)
		st.decoded += i
		st.high, st.cont = -1, 0
	}
	s.buf, s.n, s.last = b[i:], s.n+int64(i), b[i-1]
}

// plain marks the bytes run may take: printable ASCII but '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// strState is the clipping state of one string.
type strState struct {
	decoded int
	cont    int // continuation bytes still expected after a lead
	clip    bool
	high    int // index in out of a kept high surrogate escape just before, or -1
}

// keep appends raw (one character or escape, n decoded bytes) unless the
// string is, or now becomes, clipped.
func (d *reducer) keep(st *strState, limit int, kind Cut, n int, low bool, raw ...byte) {
	if st.clip {
		return
	}
	if st.decoded+n > limit || !d.room() {
		st.clip = true
		d.cut |= kind
		if !d.room() {
			d.cut |= CutValues
		}
		if low && st.high >= 0 {
			d.out = d.out[:st.high] // never keep half a surrogate pair
		}
		return
	}
	st.high, st.cont = -1, 0
	st.decoded += n
	d.out = append(d.out, raw...)
}

// escape reads one escape after its backslash.
func (d *reducer) escape(st *strState, limit int, kind Cut) error {
	e, ok := d.s.next()
	if !ok {
		return errSyntax
	}
	switch e {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		d.keep(st, limit, kind, 1, false, '\\', e)
		return nil
	case 'u':
	default:
		return errSyntax
	}
	raw := [6]byte{'\\', 'u'}
	var r rune
	for i := 2; i < 6; i++ {
		h, ok := d.s.next()
		v, valid := hexVal(h)
		if !ok || !valid {
			return errSyntax
		}
		raw[i], r = h, r<<4|v
	}
	switch {
	case r >= 0xD800 && r < 0xDC00:
		at := len(d.out)
		d.keep(st, limit, kind, 2, false, raw[:]...)
		if !st.clip {
			st.high = at
		}
	case r >= 0xDC00 && r < 0xE000:
		d.keep(st, limit, kind, 2, true, raw[:]...)
	default:
		d.keep(st, limit, kind, utf8.RuneLen(r), false, raw[:]...)
	}
	return nil
}

func hexVal(h byte) (rune, bool) {
	switch {
	case h >= '0' && h <= '9':
		return rune(h - '0'), true
	case h >= 'a' && h <= 'f':
		return rune(h-'a') + 10, true
	case h >= 'A' && h <= 'F':
		return rune(h-'A') + 10, true
	}
	return 0, false
}

// seqLen is the length of the UTF-8 sequence a lead byte starts (1 for an
// invalid lead: the decoder replaces it).
func seqLen(c byte) int {
	switch {
	case c >= 0xF0 && c < 0xF8:
		return 4
	case c >= 0xE0:
		return 3
	case c >= 0xC0:
		return 2
	}
	return 1
}
