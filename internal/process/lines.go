package process

import (
	"bufio"
	"errors"
	"io"

	"github.com/coagent8/coagent8/internal/fault"
)

// Lines reads newline-delimited records of at most max bytes each, so a
// runaway CLI cannot grow memory without bound (contract.md §7).
type Lines struct {
	r   *bufio.Reader
	max int
}

// NewLines returns a line reader over r with a per-record limit max.
func NewLines(r io.Reader, max int) *Lines {
	return &Lines{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next record without its newline. At the end it returns
// io.EOF (a final unterminated record is returned first). A record over the
// limit is BUFFER_LIMIT.
func (l *Lines) Next() ([]byte, error) {
	var rec []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		if len(rec)+len(chunk) > l.max+1 {
			return nil, fault.New(fault.BufferLimit, "stream.record_limit", "CLI record exceeds the UTF-8 byte limit.")
		}
		rec = append(rec, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if len(rec) > 0 && errors.Is(err, io.EOF) {
				return rec, nil
			}
			return nil, err
		}
		return rec[:len(rec)-1], nil
	}
}
