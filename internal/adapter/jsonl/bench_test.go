package jsonl

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// prod are the limits the backends use (adapter.RecordLimits; not
// imported: adapter imports this package).
var prod = Limits{Record: 512 << 10, String: 1<<20 + 2*(16<<10+256), Budget: 8 << 20, Depth: 64}

// stream is a Claude-like stdout: small delta records, then one answer
// record of answer bytes (JSON-escaped newlines every 22 bytes).
func stream(records, answer int) []byte {
	var b bytes.Buffer
	for i := 0; i < records; i++ {
		b.WriteString(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"line of a long answer\n"}},"session_id":"6f1c1c1c-1c1c-4c1c-8c1c-1c1c1c1c1c1c"}` + "\n")
	}
	if answer > 0 {
		b.WriteString(`{"type":"result","subtype":"success","result":"`)
		b.WriteString(strings.Repeat(`line of a long answe\n`, answer/22))
		b.WriteString(`","is_error":false}` + "\n")
	}
	return b.Bytes()
}

func benchReader(b *testing.B, in []byte) {
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		r := NewReader(bytes.NewReader(in), prod)
		for {
			if _, err := r.Next(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchScanner is the baseline: bufio.Scanner holding every line whole
// (its buffer sized for the longest line), no reduction.
func benchScanner(b *testing.B, in []byte) {
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(in))
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
		}
		if sc.Err() != nil {
			b.Fatal(sc.Err())
		}
	}
}

func BenchmarkSmallRecords(b *testing.B) {
	in := stream(10000, 0)
	b.Run("jsonl", func(b *testing.B) { benchReader(b, in) })
	b.Run("bufio.Scanner", func(b *testing.B) { benchScanner(b, in) })
}

func BenchmarkAnswer2MiB(b *testing.B) {
	in := stream(0, 2<<20)
	b.Run("jsonl", func(b *testing.B) { benchReader(b, in) })
	b.Run("bufio.Scanner", func(b *testing.B) { benchScanner(b, in) })
}

func BenchmarkAnswer600KB(b *testing.B) {
	in := stream(0, 600<<10)
	b.Run("jsonl", func(b *testing.B) { benchReader(b, in) })
	b.Run("bufio.Scanner", func(b *testing.B) { benchScanner(b, in) })
}
