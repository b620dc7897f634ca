package jsonl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Cut says how a record was reduced. It is a bitmask; 0 is verbatim.
type Cut uint8

const (
	// CutStrings: string values were shortened; the structure is intact.
	CutStrings Cut = 1 << iota
	// CutValues: members, elements or values were dropped or replaced.
	CutValues
)

// String names the set bits ("none", "strings", "values", "strings+values").
func (c Cut) String() string {
	switch c {
	case 0:
		return "none"
	case CutStrings:
		return "strings"
	case CutValues:
		return "values"
	case CutStrings | CutValues:
		return "strings+values"
	}
	panic(fmt.Sprintf("jsonl: unknown Cut %d", uint8(c)))
}

// Limits bound one record. Every field must be positive ([NewReader]
// panics otherwise: limits are constants of the caller, not input).
type Limits struct {
	// Record is the longest line, in bytes without its newline, returned
	// verbatim.
	Record int
	// String is how many decoded bytes of each string value a reduced
	// record keeps.
	String int
	// Budget bounds the bytes of a reduced record: once it is spent,
	// strings end and further members and elements are dropped.
	Budget int
	// Depth is the deepest nesting kept; deeper containers are emptied.
	Depth int
}

// Record is one line. Data is valid for the caller to keep (never reused).
type Record struct {
	// Data is the record: the line itself, or its reduction when Cut != 0.
	Data []byte
	// Cut says how Data differs from the line.
	Cut Cut
	// Size is the length of the line in bytes, without its newline.
	Size int64
	// Reduced reports that the line was longer than [Limits.Record], so
	// Data is its reduction (compact JSON), even when Cut is 0.
	Reduced bool
}

// Clipped reports whether s, a string value decoded from a record reduced
// by c, may have been shortened: strings were cut and s is within a
// character of the limit. A shorter string was kept whole (a cut forced by
// the budget also sets CutValues).
func (c Cut) Clipped(s string, lim Limits) bool {
	return c&CutStrings != 0 && len(s) > lim.String-utf8.UTFMax
}

// SyntaxError is a malformed line that was too long to return verbatim.
// Its whole line has been consumed.
type SyntaxError struct {
	// Size is the line's length in bytes.
	Size int64
	// Offset is the byte offset in the line where parsing failed.
	Offset int64
	msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jsonl: malformed %d-byte record at byte %d: %s", e.Size, e.Offset, e.msg)
}

// Reader reads records. It is not safe for concurrent use.
type Reader struct {
	r   *bufio.Reader
	lim Limits
}

// NewReader returns a Reader over r with the given limits.
func NewReader(r io.Reader, lim Limits) *Reader {
	if lim.Record <= 0 || lim.String <= 0 || lim.Budget <= 0 || lim.Depth <= 0 {
		panic("jsonl: every limit must be positive")
	}
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), lim: lim}
}

// Next returns the next record. At the end of input it returns io.EOF (a
// final line without a newline is returned first); a read error is
// returned as is; a reduced line that is not JSON is a *SyntaxError.
func (l *Reader) Next() (Record, error) {
	var rec []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		if len(rec)+len(chunk) > l.lim.Record+1 {
			// Too long to return verbatim: what was read so far becomes
			// the head of the reduction, the rest streams in.
			return l.reduce(append(rec, chunk...), err)
		}
		rec = append(rec, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(rec) > 0:
			return Record{Data: rec, Size: int64(len(rec))}, nil
		case err != nil:
			return Record{}, err
		}
		rec = rec[:len(rec)-1]
		return Record{Data: rec, Size: int64(len(rec))}, nil
	}
}

// reduce parses head and, when its read stopped at a full buffer (rerr
// is bufio.ErrBufferFull), the rest of its line.
func (l *Reader) reduce(head []byte, rerr error) (Record, error) {
	s := &source{head: head, r: l.r, more: errors.Is(rerr, bufio.ErrBufferFull)}
	if rerr != nil && !s.more && !errors.Is(rerr, io.EOF) {
		s.err = rerr
	}
	d := reducer{s: s, lim: l.lim, out: make([]byte, 0, min(l.lim.Budget, 2*l.lim.Record)+64)}
	perr := d.document()
	if s.err != nil {
		return Record{}, s.err
	}
	if perr != nil {
		off := s.n
		s.drain()
		return Record{}, &SyntaxError{Size: s.n, Offset: off, msg: perr.Error()}
	}
	return Record{Data: d.out, Cut: d.cut, Size: s.n, Reduced: true}, nil
}
