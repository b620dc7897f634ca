package redact

import (
	"errors"
	"io"
	"unicode/utf8"
)

// ctxLen is the raw context kept before the pending bytes: left boundaries
// and keyword keys (at most 76 bytes back) are judged on it.
const ctxLen = 128

// compactAt is how far the buffer may grow before its emitted prefix is
// dropped; compacting rarely keeps small writes cheap.
const compactAt = 4096

var errClosed = errors.New("redact: write after close")

// Writer returns a streaming redactor that writes redacted text to w. Its
// output is byte-identical to [Redactor.String] of everything written,
// whatever the chunking. Close flushes the held-back tail (at most
// [MaxHold] bytes) and does not close w. A write error from w is returned
// by that and every later call. Not safe for concurrent use.
func (r *Redactor) Writer(w io.Writer) io.WriteCloser {
	// Sized once for the steady state (context + compaction slack + a
	// write), so small writes do not regrow the buffers.
	return &writer{sc: newScanner(r.rs), w: w,
		buf: make([]byte, 0, compactAt+2*ctxLen+1024), out: make([]byte, 0, 1024)}
}

type writer struct {
	sc     scanner
	w      io.Writer
	buf    []byte // raw: context, then pending from index from
	from   int
	ms     []match
	out    []byte // redacted; may end in a partial UTF-8 character
	err    error
	closed bool
}

func (w *writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, errClosed
	}
	w.buf = append(w.buf, p...)
	if err := w.flush(false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close redacts and writes the rest, treating it as the end of the input.
func (w *writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	return w.flush(true)
}

func (w *writer) flush(final bool) error {
	ms, stop := w.sc.scan(w.buf, w.from, final, w.ms[:0])
	w.out = apply(w.out, w.buf, w.from, stop, ms)
	w.ms = ms[:0]
	w.from = stop
	if keep := stop - ctxLen; keep >= compactAt {
		n := copy(w.buf, w.buf[keep:])
		w.buf = w.buf[:n]
		w.from -= keep
	}
	k := len(w.out)
	if !final {
		k = wholeRunes(w.out)
	}
	if k == 0 {
		return nil
	}
	if _, err := w.w.Write(w.out[:k]); err != nil {
		w.err = err
		return err
	}
	w.out = w.out[:copy(w.out, w.out[k:])]
	return nil
}

// wholeRunes returns the length of b without a trailing partial UTF-8
// character, so a downstream reader never sees half a character.
func wholeRunes(b []byte) int {
	for k := len(b) - 1; k >= 0 && k >= len(b)-utf8.UTFMax; k-- {
		if utf8.RuneStart(b[k]) {
			if !utf8.FullRune(b[k:]) {
				return k
			}
			break
		}
	}
	return len(b)
}
