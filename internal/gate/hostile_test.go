package gate

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"testing"
	"time"
)

// hostileCall sends one streamed Anthropic request through a gate whose
// upstream is h, and returns the response, its body and every header
// block the client saw before it (1xx informational responses).
func hostileCall(t *testing.T, h http.HandlerFunc) (f *fixture, resp *http.Response, body string, early []string) {
	t.Helper()
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	f = newFixture(t, func(o *Options) { o.Upstreams[Anthropic] = up.URL })
	gr, phantom := f.grant(spec(Anthropic))
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, hdr textproto.MIMEHeader) error {
		b, _ := json.Marshal(hdr)
		early = append(early, string(b))
		return nil
	}}
	req, _ := http.NewRequest("POST", f.srv.URL+"/v1/messages", strings.NewReader(
		`{"model":"`+gr.Model+`","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	req.Header.Set("X-Api-Key", phantom)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", "identity") // the test client decodes nothing itself
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return f, resp, readAll(t, resp), early
}

func gzipped(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func deflated(s string) []byte {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestCompression)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

// decoded is what a client that honours Content-Encoding (fetch, the
// SDKs) reads from body.
func decoded(enc, body string) string {
	var r io.Reader
	switch enc {
	case "gzip":
		r, _ = gzip.NewReader(strings.NewReader(body))
	case "deflate":
		r = flate.NewReader(strings.NewReader(body))
	}
	if r == nil {
		return body
	}
	b, _ := io.ReadAll(r)
	return string(b)
}

// TestHostileUpstreamHeadersAndEncodings: an upstream that hides the real
// key where the response check does not read — an informational 103
// response's headers, or a 200 body in a Content-Encoding the client
// decodes (the gate asks for identity; an upstream may ignore that) —
// never gets it to the client: 1xx responses are not forwarded, an
// encoded success body is withheld whole (502, one security event).
func TestHostileUpstreamHeadersAndEncodings(t *testing.T) {
	key := realKey(Anthropic)
	sse := "event: error\ndata: {\"type\":\"error\",\"error\":{\"message\":\"" + key + "\"}}\n\n"
	js := `{"content":[{"type":"text","text":"` + key + `"}]}`
	encoded := func(ctype, enc string, body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Content-Encoding", enc)
			w.Write(body)
		}
	}
	tests := []struct {
		name       string
		h          http.HandlerFunc
		wantStatus int
		wantEcho   int
	}{
		{"103 early hints with the key", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", "</x?k="+key+">; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"content":[]}`))
		}, 200, 0},
		{"pretty-printed json body, the key JSON-escaped", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("{\n  \"content\": [\n    {\n      \"type\": \"text\",\n      \"text\": \"" + jsonEscapeAll(key) + "\"\n    }\n  ]\n}\n"))
		}, 502, 1},
		{"gzip event stream", encoded("text/event-stream", "gzip", gzipped(sse)), 502, 1},
		{"gzip json body", encoded("application/json", "gzip", gzipped(js)), 502, 1},
		{"deflate json body", encoded("application/json", "deflate", deflated(js)), 502, 1},
		{"br json body", encoded("application/json", "br", []byte("\x1b\x00")), 502, 1},
		{"gzip listed after identity", encoded("application/json", "identity, gzip", gzipped(js)), 502, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, resp, body, early := hostileCall(t, tt.h)
			enc := resp.Header.Get("Content-Encoding")
			hdr, _ := json.Marshal(resp.Header)
			got := decoded(enc, body) + string(hdr) + strings.Join(early, "")
			var v any
			if json.Unmarshal([]byte(decoded(enc, body)), &v) == nil { // as the client reads it
				b, _ := json.Marshal(v)
				got += string(b)
			}
			if strings.Contains(got, key) || strings.Contains(got, "canary") {
				t.Errorf("the client received the real key: %s", got)
			}
			if enc != "" {
				t.Errorf("Content-Encoding %q reached the client", enc)
			}
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d (%s)", resp.StatusCode, tt.wantStatus, body)
			}
			if n := countReason(f.events.Events(), ReasonEcho); n != tt.wantEcho {
				t.Errorf("%d %s security events, want %d", n, ReasonEcho, tt.wantEcho)
			}
		})
	}
}

// jsonEscapeAll writes every byte of s as a \u00XX escape: no credential
// format matches it undecoded.
func jsonEscapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\u%04x`, s[i])
	}
	return b.String()
}

// chunkReader returns at most n bytes per Read: an upstream trickling
// its answer.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// TestLongLines: a line longer than maxLine is withheld, also trickled in
// small reads, in time linear in its length (searching the whole pending
// line per read took minutes here); a key in a long line straddling any
// read boundary is found.
func TestLongLines(t *testing.T) {
	key := realKey(Anthropic)
	pad := strings.Repeat("x", 32<<10-len("data: ")-10) // the key straddles the first 32 KiB read
	for _, tc := range []struct {
		name, sse string
		chunk     int
		want      string
	}{
		{"a line well above maxLine, 64 bytes per read", "data: " + strings.Repeat("x", maxLine+1<<10) + "\n\n", 64, "oversized response line"},
		{"a line above maxLine without an end", "data: " + strings.Repeat("x", maxLine+1), 32 << 10, "oversized response line"},
		{"the key across a read boundary of a 1 MiB line", "data: " + pad + key + strings.Repeat("y", 1<<20) + "\n\n", 32 << 10, "response body"},
		{"the key across a read boundary, 7 bytes per read", "data: " + strings.Repeat("x", 100<<10) + key + "\n\n", 7, "response body"},
		{"a 1 MiB line, clean", "data: " + strings.Repeat("x", 1<<20) + "\n\n", 32 << 10, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaked := ""
			g := &guard{rc: io.NopCloser(chunkReader{strings.NewReader(tc.sse), tc.chunk}), resp: &http.Response{}, check: leakCheck{key: []byte(key)},
				onLeak: func(w string) { leaked = w }, errEv: errorEvent(Anthropic, "test")}
			done := make(chan []byte, 1)
			go func() { out, _ := io.ReadAll(g); done <- out }()
			var out []byte
			select {
			case out = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the guard did not finish the stream in 30 s")
			}
			g.Close()
			if bytes.Contains(out, []byte("canary")) {
				t.Error("the key reached the client")
			}
			if leaked != tc.want {
				t.Errorf("withheld %q, want %q", leaked, tc.want)
			}
			if tc.want == "" && string(out) != tc.sse {
				t.Errorf("clean stream changed: %d bytes out, %d in", len(out), len(tc.sse))
			}
		})
	}
}
