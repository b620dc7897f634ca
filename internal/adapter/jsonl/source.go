package jsonl

import (
	"bufio"
	"errors"
	"io"
)

// source yields the bytes of one line: a head already read, then the rest
// of the line from r. The newline (or the end of input) ends it; it is
// consumed, never returned.
type source struct {
	head []byte
	r    *bufio.Reader
	more bool   // the line continues in r after head
	buf  []byte // the unread part of the current chunk
	n    int64  // bytes of the line consumed so far
	end  bool
	err  error // a read error other than io.EOF
	back bool  // unread was called: next returns last again
	last byte
}

// next returns the next byte of the line, or ok=false at its end.
func (s *source) next() (byte, bool) {
	if s.back {
		s.back = false
		return s.last, true
	}
	for len(s.buf) == 0 {
		if !s.fill() {
			return 0, false
		}
	}
	c := s.buf[0]
	s.buf = s.buf[1:]
	if c == '\n' {
		s.end, s.buf = true, nil
		return 0, false
	}
	s.n++
	s.last = c
	return c, true
}

// unread makes next return the last byte again (one byte of push-back).
func (s *source) unread() { s.back = true }

// fill loads the next chunk; false at the end of the line.
func (s *source) fill() bool {
	if s.end {
		return false
	}
	if s.head != nil {
		s.buf, s.head = s.head, nil
		return true
	}
	if !s.more {
		s.end = true
		return false
	}
	chunk, err := s.r.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
	case err == nil:
		s.more = false
	case errors.Is(err, io.EOF):
		s.more = false
	default:
		s.err, s.more = err, false
	}
	s.buf = chunk
	return true
}

// drain consumes the rest of the line.
func (s *source) drain() {
	s.back = false
	for {
		if _, ok := s.next(); !ok {
			return
		}
	}
}
