package gate

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestFormatSplitOverManyDeltas: a credential format longer than the
// window around one boundary (a PEM private key block, built at run time)
// streamed in 8-byte text deltas that arrive in one upstream read is seen
// whole, as the client will reassemble it, and withheld; the same text
// without the key block passes untouched.
func TestFormatSplitOverManyDeltas(t *testing.T) {
	body := strings.Repeat("Qm9ndXMga2V5IG1hdGVyaWFsIGZvciBhIHRlc3Q", 6)
	pem := "-----BEGIN " + "RSA PRIVATE KEY-----\n" + body + "\n-----END " + "RSA PRIVATE KEY-----\n"
	if !answerFormats.Changes([]byte(pem)) {
		t.Fatal("the answer profile does not flag the whole PEM block: the test proves nothing")
	}
	for _, tc := range []struct {
		name, text string
		want       bool
	}{
		{"pem block", "here it is:\n" + pem + "done", true},
		{"plain text", "here it is:\n" + body + "\ndone", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sse bytes.Buffer
			for i := 0; i < len(tc.text); i += 8 {
				d, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": 0,
					"delta": map[string]any{"type": "text_delta", "text": tc.text[i:min(i+8, len(tc.text))]}})
				sse.WriteString("event: content_block_delta\ndata: ")
				sse.Write(d)
				sse.WriteString("\n\n")
			}
			leaked := ""
			g := &guard{rc: io.NopCloser(&sse), resp: &http.Response{}, check: leakCheck{}, onLeak: func(w string) { leaked = w },
				errEv: errorEvent(Anthropic, "test")}
			out, _ := io.ReadAll(g)
			g.Close()
			if got := leaked != ""; got != tc.want {
				t.Errorf("withheld = %v (%q), want %v", got, leaked, tc.want)
			}
			if tc.want && bytes.Contains(out, []byte("PRIVATE KEY")) {
				t.Errorf("the client received part of the key block: %q", out)
			}
		})
	}
}
