package gate

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// sseAnswer is a ~1 MiB Anthropic stream of 100-byte text deltas.
func sseAnswer() []byte {
	var b bytes.Buffer
	text := strings.Repeat("func main() { fmt.Println(\"hello\") } // ", 3)[:100]
	delta, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": 0,
		"delta": map[string]any{"type": "text_delta", "text": text}})
	for b.Len() < 1<<20 {
		b.WriteString("event: content_block_delta\ndata: ")
		b.Write(delta)
		b.WriteString("\n\n")
	}
	return b.Bytes()
}

// eventReader returns one SSE event per Read, as the gate reads a stream
// whose provider flushes every event.
type eventReader struct{ rest []byte }

func (r *eventReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		return 0, io.EOF
	}
	n := bytes.Index(r.rest, []byte("\n\n")) + 2
	if n < 2 || n > len(p) {
		n = min(len(p), len(r.rest))
	}
	copy(p, r.rest[:n])
	r.rest = r.rest[n:]
	return n, nil
}

// BenchmarkResponseCheck measures the gate's response path over a 1 MiB
// streamed answer, read in the proxy's 32 KiB chunks ("32KiB") or one SSE
// event per read ("event", as a provider that flushes every event is
// read): the meter alone (before issue 18) and the meter behind the
// credential guard (issue 18 scope 2). docs/PERFORMANCE.md, "Response
// check".
func BenchmarkResponseCheck(b *testing.B) {
	answer := sseAnswer()
	key := []byte(realKey(Anthropic))
	for _, reads := range []string{"32KiB", "event"} {
		for _, guarded := range []bool{false, true} {
			b.Run(reads+"/"+map[bool]string{false: "meter", true: "meter+guard"}[guarded], func(b *testing.B) {
				benchCheck(b, answer, key, reads == "event", guarded)
			})
		}
	}
}

func benchCheck(b *testing.B, answer, key []byte, events, guarded bool) {
	b.SetBytes(int64(len(answer)))
	buf := make([]byte, 32<<10)
	for b.Loop() {
		var rc io.ReadCloser = io.NopCloser(bytes.NewReader(answer))
		if events {
			rc = io.NopCloser(&eventReader{rest: answer})
		}
		if guarded {
			rc = &guard{rc: rc, resp: &http.Response{}, check: leakCheck{key: key}, onLeak: func(string) { b.Fatal("leak") }}
		}
		m := meter{provider: Anthropic, stream: true}
		for {
			n, err := rc.Read(buf)
			m.write(buf[:n])
			if err != nil {
				break
			}
		}
		rc.Close()
	}
}
