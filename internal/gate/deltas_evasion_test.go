package gate

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// clientText is what a client reassembles from an SSE body: each event's
// data lines joined with "\n" (the SSE rule), decoded as JSON as a
// lenient client decodes it (whitespace anywhere, escaped key names, the
// last of duplicate keys), the delta strings of both providers appended
// per content block (Anthropic "index", OpenAI "output_index"); the
// blocks' texts are returned separated by NUL.
func clientText(sse []byte) string {
	blocks := map[float64]*strings.Builder{}
	var order []float64
	// A leading byte order mark is dropped; CR, LF and CRLF each end a
	// line (the SSE rules).
	sse = bytes.TrimPrefix(sse, []byte("\uFEFF"))
	sse = bytes.ReplaceAll(bytes.ReplaceAll(sse, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	for _, ev := range bytes.Split(sse, []byte("\n\n")) {
		var data [][]byte
		for line := range bytes.Lines(ev) {
			if d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\n"), []byte("data:")); ok {
				data = append(data, bytes.TrimPrefix(d, []byte(" ")))
			}
		}
		// JSON.parse (Claude Code) reads a number beyond float64's range
		// as Infinity, not as an error: numbers are kept as text.
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(bytes.Join(data, []byte("\n"))))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			continue
		}
		if _, err := dec.Token(); err != io.EOF {
			continue // trailing data: not one JSON value
		}
		num := func(k string) (float64, bool) {
			n, ok := v[k].(json.Number)
			f, _ := n.Float64()
			return f, ok
		}
		idx, _ := num("index")
		if o, ok := num("output_index"); ok {
			idx = o
		}
		b := blocks[idx]
		if b == nil {
			b = &strings.Builder{}
			blocks[idx] = b
			order = append(order, idx)
		}
		switch d := v["delta"].(type) {
		case string: // OpenAI: the delta is the string
			b.WriteString(d)
		case map[string]any:
			for _, k := range []string{"text", "thinking", "partial_json"} {
				if s, ok := d[k].(string); ok {
					b.WriteString(s)
				}
			}
		}
	}
	var out []string
	for _, i := range order {
		out = append(out, blocks[i].String())
	}
	return strings.Join(out, "\x00")
}

// TestKeySplitAcrossEvasiveDeltas: a hostile upstream streams the grant's
// key in two pieces, neither holding it whole, in JSON a client decodes
// to the same text as a plain delta; the window must see the pieces as
// the client does and withhold the stream.
func TestKeySplitAcrossEvasiveDeltas(t *testing.T) {
	// An opaque grant key no credential format matches: only the literal
	// search of the window can find it.
	key := "gk" + strings.Repeat("-q7", 14) + "-canary"
	if answerFormats.Changes([]byte(key)) {
		t.Fatal("the answer profile flags the opaque key: the test would not isolate the window's key search")
	}
	a, b := key[:len(key)/2], key[len(key)/2:]
	esc := func(s string) string { return strings.ReplaceAll(s, "-", `\u002d`) }
	anth := func(field, s string) string {
		return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\"," + field + s + "\"}}\n\n"
	}
	oai := func(s string) string {
		return "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"" + s + "\"}\n\n"
	}
	for _, tc := range []struct{ name, sse string }{
		{"plain pieces", anth(`"text":"`, a) + anth(`"text":"`, b)},
		{"escaped hyphens in the first piece", anth(`"text":"`, esc(a)) + anth(`"text":"`, b)},
		{"escaped hyphens in the second piece", anth(`"text":"`, a) + anth(`"text":"`, esc(b))},
		{"openai escaped hyphens", oai(esc(a)) + oai(b)},
		{"thinking escaped", anth(`"thinking":"`, esc(a)) + anth(`"thinking":"`, b)},
		{"decoy field in another object", strings.Replace(anth(`"text":"`, a), `"index":0,`, `"index":0,"x":{"thinking":"d"},`, 1) + strings.Replace(anth(`"text":"`, b), `"index":0,`, `"index":0,"x":{"thinking":"d"},`, 1)},
		{"interleaved blocks", anth(`"text":"`, a) + strings.Replace(anth(`"text":"`, "zz"), `"index":0`, `"index":1`, 1) + anth(`"text":"`, b)},
		{"whitespace around the colon", anth(`"text" : "`, a) + anth(`"text" : "`, b)},
		{"escaped key name", anth(`"t\u0065xt":"`, a) + anth(`"t\u0065xt":"`, b)},
		{"duplicate key, the last one counts", anth(`"text":"","text":"`, a) + anth(`"text":"","text":"`, b)},
		{"a number beyond float64 in the events", strings.Replace(anth(`"t\u0065xt":"`, a), `"index":0,`, `"index":0,"x":1e999,`, 1) +
			strings.Replace(anth(`"t\u0065xt":"`, b), `"index":0,`, `"index":0,"x":1e999,`, 1)},
		{"multi-line data", "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"text\":\n" + "data: \"" + a + "\"}}\n\n" +
			"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"text\":\n" + "data: \"" + b + "\"}}\n\n"},
		// Clients differ on the block of an index that is not a plain
		// integer (content[event.index] reads "0" as 0, .at() a missing
		// one as 0): such text is withheld.
		{"index as a string", anth(`"text":"`, a) + strings.Replace(anth(`"text":"`, b), `"index":0`, `"index":"0"`, 1)},
		{"index missing", anth(`"text":"`, a) + strings.Replace(anth(`"text":"`, b), `"index":0,`, ``, 1)},
		{"index null", anth(`"text":"`, a) + strings.Replace(anth(`"text":"`, b), `"index":0`, `"index":null`, 1)},
		{"index 0.0 is 0", anth(`"text":"`, a) + strings.Replace(anth(`"text":"`, b), `"index":0`, `"index":0.0`, 1)},
		{"index and output_index", anth(`"text":"`, a) + strings.Replace(anth(`"text":"`, b), `"index":0`, `"index":1,"output_index":0`, 1)},
		{"a byte order mark before the first data line", "\uFEFF" + strings.TrimPrefix(anth(`"text":"`, a), "event: content_block_delta\n") + anth(`"text":"`, b)},
		{"a data line after a complete one voids the event", anth(`"text":"`, a) +
			strings.Replace(anth(`"text":"`, "junk"), "\n\n", "\ndata: 1\n\n", 1) + anth(`"text":"`, b)},
	} {
		t.Run(tc.name, func(t *testing.T) { checkWithheld(t, key, tc.sse, "response deltas") })
	}
	t.Run("escaped pieces of other text pass", func(t *testing.T) {
		sse := anth(`"text":"`, esc(a)) + anth(`"text":"`, "not the rest")
		g := &guard{rc: io.NopCloser(strings.NewReader(sse)), resp: &http.Response{}, check: leakCheck{key: []byte(key)},
			onLeak: func(w string) { t.Errorf("withheld %q", w) }, errEv: errorEvent(Anthropic, "test")}
		out, _ := io.ReadAll(g)
		g.Close()
		if string(out) != sse {
			t.Errorf("stream changed:\n got %q\nwant %q", out, sse)
		}
	})
}

// TestBareCarriageReturnWithheld: a client ends an SSE line at a lone CR
// too, so a key split across events ended that way is whole on its side;
// the gate, reading LF-ended lines, withholds such a stream. CRLF is read
// as the client reads it.
func TestBareCarriageReturnWithheld(t *testing.T) {
	key := "gk" + strings.Repeat("-q7", 14) + "-canary"
	a, b := key[:len(key)/2], key[len(key)/2:]
	anth := func(s, eol string) string {
		return "event: content_block_delta" + eol + "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + s + "\"}}" + eol + eol
	}
	for _, tc := range []struct{ name, sse, want string }{
		{"CR line endings", anth(a, "\r") + anth(b, "\r"), "response line ending"},
		{"CR, then LF line endings", anth(a, "\r") + anth(b, "\n"), "response line ending"},
		{"CR-ended events inside one LF-ended line", anth(a, "\r") + anth(b, "\r") + "\n", "response line ending"},
		{"CR then CRLF ends an event", strings.ReplaceAll(anth(a, "\n"), "\n\n", "\r\r\n") + anth(b, "\n"), "response line ending"},
		{"CRLF line endings", anth(a, "\r\n") + anth(b, "\r\n"), "response deltas"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkWithheld(t, key, tc.sse, tc.want) })
	}
}

// TestMultiLineEventDecodedWhole: an event whose JSON spans several data
// lines is read by the client decoded, every string of it; a JSON-escaped
// key in any field, or an escaped credential format deep in a delta, is
// whole there although no line, decoded alone as JSON, shows it. The
// line check now decodes escapes in place too and withholds it first
// ("response body"); the window must still find it on its own.
func TestMultiLineEventDecodedWhole(t *testing.T) {
	key := "gk" + strings.Repeat("-q7", 14) + "-canary"
	esc := strings.ReplaceAll(key, "-", `\u002d`)
	ghp := `\u0067hp_` + strings.Repeat("q", 36) // a GitHub token format
	if !answerFormats.Changes([]byte("ghp_" + strings.Repeat("q", 36))) {
		t.Fatal("the answer profile does not flag the token: the case proves nothing")
	}
	for _, tc := range []struct{ name, sse string }{
		{"escaped key in an error message", "event: error\ndata: {\"type\":\"error\",\"error\":{\"message\":\ndata: \"" + esc + "\"}}\n\n"},
		{"escaped format deep in a delta", "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"text\":\ndata: \"" +
			strings.Repeat("p ", 50) + ghp + "\"}}\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaked := ""
			g := &guard{rc: io.NopCloser(strings.NewReader(tc.sse)), resp: &http.Response{}, check: leakCheck{key: []byte(key)},
				onLeak: func(w string) { leaked = w }, errEv: errorEvent(Anthropic, "test")}
			out, _ := io.ReadAll(g)
			g.Close()
			if bytes.Contains(out, []byte("q7")) || bytes.Contains(out, []byte("qqqq")) {
				t.Errorf("the event reached the client: %q", out)
			}
			if leaked != "response body" {
				t.Errorf("withheld %q, want %q", leaked, "response body")
			}
			var w deltaWindow
			if !w.leaks(leakCheck{key: []byte(key)}, []byte(tc.sse)) {
				t.Error("the delta window alone did not find it")
			}
		})
	}
}

// checkWithheld streams sse, from which a client reassembles key, through
// a guard for key: the client must not reassemble it from what the guard
// released, and the guard must have withheld the stream for want.
func checkWithheld(t *testing.T, key, sse, want string) {
	t.Helper()
	if !strings.Contains(clientText([]byte(sse)), key) {
		t.Fatalf("the client would not reassemble the key: the case proves nothing (%q)", clientText([]byte(sse)))
	}
	leaked := ""
	g := &guard{rc: io.NopCloser(strings.NewReader(sse)), resp: &http.Response{}, check: leakCheck{key: []byte(key)},
		onLeak: func(w string) { leaked = w }, errEv: errorEvent(Anthropic, "test")}
	out, _ := io.ReadAll(g)
	g.Close()
	if strings.Contains(clientText(out), key) {
		t.Errorf("the client reassembled the key (withheld %q): %q", leaked, out)
	}
	if leaked != want {
		t.Errorf("withheld %q, want %q", leaked, want)
	}
}
