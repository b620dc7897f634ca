package redact

import "math/bits"

// The scanner is one left-to-right pass shared by the one-shot and the
// streaming paths, so both produce the same bytes by construction:
//
//   - Only bytes flagged in the profile's trigger table are inspected; the
//     rest are skipped by a single table load (the hot loop).
//   - A detector looks at b[i:] and answers none, hit or more. It answers
//     more exactly when its verdict would depend on a byte past len(b).
//   - When not at the end of the input, the first more stops the pass; the
//     streaming writer emits what lies before and keeps the rest (the
//     hold-back). At the end of input (final) no detector answers more.
//
// A detector never reads further than its own cap, so what is held back is
// bounded (see [MaxHold]).

// res is a detector's verdict.
type res int8

const (
	none res = iota // no match starts here
	hit             // a match starts at or after here
	more            // the verdict depends on bytes not yet seen
)

// match replaces b[start:end] by kind's marker. kind 0 drops the bytes: it is
// the continuation of a capped match (see swallow).
type match struct {
	start, end int
	kind       Kind
	// swallow is set when the match stopped at a length cap: following bytes
	// of this set belong to the same secret and are dropped, so a very long
	// token never leaves a tail in clear text while memory stays bounded.
	swallow *byteSet
}

// Trigger flags per byte.
const (
	fBound uint8 = 1 << iota // detectors that need a left boundary
	fFree                    // detectors that run anywhere ('-', diag ':' '=', home)
	fEsc                     // ESC, '\\', '%': the bytes after them count as a boundary
	cWord                    // [A-Za-z0-9]: class bit, not a trigger
)

type detector func(c *cursor, i int) (match, res)

// cursor is what detectors see: the buffer and whether it ends the input.
type cursor struct {
	b     []byte
	final bool
	rs    *ruleset
	// bnd is the scanner's last escape-made boundary, so a key glued to an
	// ANSI or JSON escape ("\x1b[32mpassword=") is read without it.
	bnd int
}

// try runs ds at i; the first more or hit decides.
func (c *cursor) try(ds []detector, i int) (match, res) {
	for _, d := range ds {
		if m, r := d(c, i); r != none {
			return m, r
		}
	}
	return match{}, none
}

// inner reports a format match at i regardless of the left boundary; used
// for values behind "Bearer " or "key=" to name the precise kind.
func (c *cursor) inner(i int) (match, res) {
	if i >= len(c.b) {
		if c.final {
			return match{}, none
		}
		return match{}, more
	}
	return c.try(c.rs.bound[c.b[i]], i)
}

// scanner carries the state of one pass across buffers.
type scanner struct {
	rs *ruleset
	c  cursor // reused: detectors take a pointer to it
	// bnd is the last index, relative to the resume point, that counts as a
	// left boundary because an escape sequence ends just before it.
	bnd     int
	swallow *byteSet
}

func newScanner(rs *ruleset) scanner { return scanner{rs: rs, bnd: -1 << 30} }

// scan appends the matches found in b[i:] to ms. b[:i] is raw context
// already emitted (for left boundaries and keyword look-back). stop is the
// index up to which output is decided: len(b) unless !final and a detector
// needs more bytes.
func (s *scanner) scan(b []byte, i int, final bool, ms []match) (_ []match, stop int) {
	s.c = cursor{b: b, final: final, rs: s.rs}
	cls := &s.rs.cls
	n := len(b)
	bnd := i + s.bnd
	i = s.drain(b, i, &ms)
	for i < n {
		var r res
		if i > bnd && n-i >= 64 {
			i, r = s.block(b, i, &bnd, &ms)
		} else if k := cls[b[i]]; k&(fFree|fEsc) != 0 || k&fBound != 0 && (i == 0 || i <= bnd || !setWord[b[i-1]]) {
			i, r = s.handle(b, i, k, &bnd, &ms)
		} else {
			i++
		}
		if r == more {
			s.bnd = bnd - i
			return ms, i
		}
	}
	s.bnd = bnd - n
	return ms, n
}

// block finds the candidate positions of b[base:base+64] without a branch
// per byte — trigger bytes that are free or escapes, and bound triggers
// after a non-word byte — and handles them in order. It returns where to
// resume. This is the hot loop: ordinary text has few candidates.
func (s *scanner) block(b []byte, base int, bnd *int, ms *[]match) (int, res) {
	cls := &s.rs.cls
	var w uint8 // 1 if the previous byte is a word byte
	if base > 0 {
		w = cls[b[base-1]] >> 3 & 1
	}
	var mask uint64
	for j, c := range b[base : base+64 : base+64] {
		k := cls[c]
		v := k&(fFree|fEsc) | k&fBound&^w // 0..7
		mask |= uint64((v+7)>>3) << j     // 1 iff v != 0, without a branch
		w = k >> 3 & 1
	}
	i := base
	for mask != 0 {
		p := base + bits.TrailingZeros64(mask)
		mask &= mask - 1
		if p < i {
			continue // inside a match already taken
		}
		next, r := s.handle(b, p, cls[b[p]], bnd, ms)
		if r == more {
			return p, more
		}
		i = next
		if *bnd >= i {
			return i, none // an escape made boundaries inside words: go byte by byte
		}
	}
	return max(i, base+64), none
}

// handle runs the detectors at i and returns the position to resume at.
func (s *scanner) handle(b []byte, i int, k uint8, bnd *int, ms *[]match) (int, res) {
	m, r := s.at(&s.c, i, k, bnd)
	switch r {
	case more:
		return i, more
	case hit:
		*ms = append(*ms, m)
		i = m.end
		if m.swallow != nil {
			s.swallow = m.swallow
			i = s.drain(b, i, ms)
		}
		return i, hit
	}
	return i + 1, none
}

// at runs the detectors for the trigger byte b[i] with flags k.
func (s *scanner) at(c *cursor, i int, k uint8, bnd *int) (match, res) {
	b := c.b
	if k&fFree != 0 {
		c.bnd = *bnd
		if m, r := c.try(s.rs.free[b[i]], i); r != none {
			return m, r
		}
	}
	if k&fEsc != 0 {
		e, r := escapeEnd(b, i, c.final)
		if r == more {
			return match{}, more
		}
		*bnd = max(*bnd, e)
	}
	if k&fBound != 0 && (i == 0 || i <= *bnd || !setWord[b[i-1]]) && s.rs.maybe(b, i) {
		return c.try(s.rs.bound[b[i]], i)
	}
	return match{}, none
}

// drain drops the continuation of a capped match.
func (s *scanner) drain(b []byte, i int, ms *[]match) int {
	if s.swallow == nil {
		return i
	}
	j := i
	for j < len(b) && s.swallow[b[j]] {
		j++
	}
	if j > i {
		*ms = append(*ms, match{start: i, end: j})
	}
	if j < len(b) {
		s.swallow = nil
	}
	return j
}

// escapeEnd returns the last index that counts as a left boundary after the
// escape starting at b[i]: a CSI sequence (ANSI colour), a JSON or C escape,
// or a percent-encoded byte. Tokens glued to these are found (notes §2).
func escapeEnd(b []byte, i int, final bool) (int, res) {
	n := len(b)
	switch b[i] {
	case '%':
		return i + 3, hit
	case '\\':
		if i+1 >= n {
			return i + 1, needs(final)
		}
		if b[i+1] == 'u' {
			return i + 6, hit
		}
		return i + 2, hit
	}
	// ESC: a CSI is ESC '[' parameter/intermediate bytes, then a final byte.
	if i+1 >= n {
		return i + 1, needs(final)
	}
	if b[i+1] != '[' {
		return i + 1, hit
	}
	j := i + 2
	for j < n && j < i+32 && b[j] >= 0x20 && b[j] <= 0x3f {
		j++
	}
	if j == n {
		return j, needs(final)
	}
	if b[j] >= 0x40 && b[j] <= 0x7e {
		return j + 1, hit
	}
	return i + 1, hit
}

// needs is the verdict for running out of bytes: more, unless the input is
// complete, in which case the end decides (reported as hit for escapes).
func needs(final bool) res {
	if final {
		return hit
	}
	return more
}
