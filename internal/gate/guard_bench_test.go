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

// openAIDelta is a Responses text delta event in the shape OpenAI sends
// it (captured streams): sequence_number first, an empty logprobs
// array and an obfuscation string of random length padding every delta.
type openAIDelta struct {
	Type         string `json:"type"`
	Seq          int    `json:"sequence_number"`
	ItemID       string `json:"item_id"`
	OutputIndex  int    `json:"output_index"`
	ContentIndex int    `json:"content_index"`
	Delta        string `json:"delta"`
	Logprobs     []any  `json:"logprobs"`
	Obfuscation  string `json:"obfuscation"`
}

// openAIAnswer is a ~1 MiB OpenAI Responses stream of token-sized text
// deltas (a word each, about a token, as the API streams them).
func openAIAnswer() []byte {
	var b bytes.Buffer
	words := strings.Fields("func main() { fmt.Println(\"hello\") } // ")
	const pad = "IEJNG9po3UP16vBoSYOkxrx9Nn"
	for i := 0; b.Len() < 1<<20; i++ {
		delta, _ := json.Marshal(openAIDelta{Type: "response.output_text.delta", Seq: i + 4,
			ItemID: "msg_0831a33f96d9eed3006a01805b1e8c8193bd7364f72ee8940e", Delta: " " + words[i%len(words)],
			Logprobs: []any{}, Obfuscation: pad[:3+i%13]})
		b.WriteString("event: response.output_text.delta\ndata: ")
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
// credential guard (issue 18 scope 2). The Anthropic stream's cases have
// no prefix; "openai/" is the Responses stream of token-sized deltas.
// docs/PERFORMANCE.md, "Response check".
func BenchmarkResponseCheck(b *testing.B) {
	for _, s := range []struct {
		prefix string
		p      Provider
		answer []byte
	}{{"", Anthropic, sseAnswer()}, {"openai/", OpenAI, openAIAnswer()}} {
		key := []byte(realKey(s.p))
		for _, reads := range []string{"32KiB", "event"} {
			for _, guarded := range []bool{false, true} {
				b.Run(s.prefix+reads+"/"+map[bool]string{false: "meter", true: "meter+guard"}[guarded], func(b *testing.B) {
					benchCheck(b, s.p, s.answer, key, reads == "event", guarded)
				})
			}
		}
	}
}

func benchCheck(b *testing.B, p Provider, answer, key []byte, events, guarded bool) {
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
		m := meter{provider: p, stream: true}
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
