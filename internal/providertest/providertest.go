package providertest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reply scripts one answer of a double. The zero value answers "ok" with
// small usage numbers.
type Reply struct {
	// Text is the answer text; "" means "ok".
	Text string
	// Chunks splits Text into this many text deltas (0 or 1 = one delta).
	Chunks int
	// ChunkDelay is slept before each streamed event after the first, so a
	// stream with Chunks=50 and ChunkDelay=20ms lasts about a second.
	ChunkDelay time.Duration

	// InputTokens is the uncached input (Anthropic input_tokens; OpenAI
	// input_tokens minus CacheReadInputTokens is the uncached part).
	InputTokens int64
	// OutputTokens is the generated output.
	OutputTokens int64
	// CacheCreationInputTokens is Anthropic's cache_creation_input_tokens
	// (ignored by the OpenAI double).
	CacheCreationInputTokens int64
	// CacheReadInputTokens is Anthropic's cache_read_input_tokens, or
	// OpenAI's input_tokens_details.cached_tokens (a subset of input there).
	CacheReadInputTokens int64

	// NoUsage omits every usage object from the stream (Anthropic
	// message_start and message_delta; OpenAI response.completed) while the
	// stream still ends normally.
	NoUsage bool
	// Truncate ends the stream after the text deltas, before any terminal
	// event (no message_delta/message_stop; no response.completed).
	Truncate bool

	// Status, when not 0 or 200, makes the double answer with this HTTP
	// status and Body (Content-Type application/json) instead of a stream.
	Status int
	// Body is the error body sent with Status.
	Body string
	// EchoCredential appends the credential the double received (x-api-key
	// or the Authorization header) to Body, like a provider 401 echoing a
	// key fragment. For canary tests.
	EchoCredential bool
	// Echo echoes the credential inside a 200 answer (see [Echo]).
	Echo Echo
	// DropAfterEvents, when positive, closes the connection abruptly after
	// that many streamed events (the upstream dies after the first byte).
	DropAfterEvents int
	// DropBeforeAnswer closes the connection after reading the request,
	// before any response byte.
	DropBeforeAnswer bool
}

func (r Reply) text() string {
	if r.Text == "" {
		return "ok"
	}
	return r.Text
}

// deltas splits the text into r.Chunks pieces (at least one).
func (r Reply) deltas() []string {
	t := r.text()
	n := max(r.Chunks, 1)
	n = min(n, len(t))
	out := make([]string, 0, n)
	size := len(t) / n
	for i := 0; i < n; i++ {
		end := (i + 1) * size
		if i == n-1 {
			end = len(t)
		}
		out = append(out, t[i*size:end])
	}
	return out
}

func (r Reply) usage() (in, out int64) {
	in, out = r.InputTokens, r.OutputTokens
	if in == 0 && out == 0 && r.CacheReadInputTokens == 0 && r.CacheCreationInputTokens == 0 {
		return 10, 5
	}
	return in, out
}

// Options configure a double. The zero value answers every request with the
// zero [Reply].
type Options struct {
	// Replies are used in order, one per model request (messages or
	// responses); after the last, Default answers.
	Replies []Reply
	// Default answers when Replies is exhausted.
	Default Reply
	// Model is reported in answers; "" echoes the request's model.
	Model string
}

// Request is one request the double received. Header and Body are copies.
type Request struct {
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte
	// Completed reports whether the double wrote the whole scripted
	// answer without a write error (false while still streaming or when
	// the client went away early).
	Completed bool
}

// Credential returns the credential the request carried: x-api-key, else
// the token of "Authorization: Bearer", else "".
func (r Request) Credential() string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// double holds what both provider doubles share: the server, the script
// and the request record. Its methods are safe for concurrent use.
type double struct {
	srv *httptest.Server

	mu      sync.Mutex
	opts    Options
	next    int
	reqs    []*Request
	streams int
}

func (d *double) start(t testing.TB, h http.Handler) {
	d.srv = httptest.NewServer(h)
	t.Cleanup(d.srv.Close)
}

// maxRequestBody is the most of a request body the doubles read.
const maxRequestBody = 64 << 20

// peekBody reads r's body (at most maxRequestBody) and puts it back, so
// a handler choosing its answer by the request can still record it.
func peekBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, err
}

// record stores a copy of r with its body and returns the stored entry.
func (d *double) record(r *http.Request) (*Request, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	rec := &Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: bytes.Clone(body)}
	d.mu.Lock()
	d.reqs = append(d.reqs, rec)
	d.mu.Unlock()
	return rec, nil
}

func (d *double) complete(rec *Request) {
	d.mu.Lock()
	rec.Completed = true
	d.mu.Unlock()
}

// reply takes the next scripted reply.
func (d *double) reply() Reply {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.next < len(d.opts.Replies) {
		d.next++
		return d.opts.Replies[d.next-1]
	}
	return d.opts.Default
}

func (d *double) model(requested string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.opts.Model != "" {
		return d.opts.Model
	}
	return requested
}

// URL returns the base URL of the double, e.g. "http://127.0.0.1:41234"
// (no trailing slash, no /v1).
func (d *double) URL() string { return d.srv.URL }

// Requests returns copies of every request received so far, in arrival order.
func (d *double) Requests() []Request {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Request, len(d.reqs))
	for i, r := range d.reqs {
		out[i] = *r
		out[i].Header = r.Header.Clone()
		out[i].Body = bytes.Clone(r.Body)
	}
	return out
}

// Script replaces the scripted replies (and restarts at the first one) and
// the default reply.
func (d *double) Script(def Reply, replies ...Reply) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.opts.Replies = append([]Reply(nil), replies...)
	d.opts.Default = def
	d.next = 0
}

// ActiveStreams reports how many streamed answers are being written now.
func (d *double) ActiveStreams() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.streams
}

func (d *double) streaming(delta int) {
	d.mu.Lock()
	d.streams += delta
	d.mu.Unlock()
}

// writeError answers with the reply's status and body.
func writeError(w http.ResponseWriter, rep Reply, rec *Request) {
	body := rep.Body
	if rep.EchoCredential {
		body += " (credential received: " + rec.Credential() + ")"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.Status)
	io.WriteString(w, body)
}

// sse writes server-sent events, flushing each and sleeping delay between
// them. After the first write error every call is a no-op.
type sse struct {
	w     http.ResponseWriter
	delay time.Duration
	drop  int // hang up before event number drop (0 = never)
	n     int
	err   error
}

func newSSE(w http.ResponseWriter, rep Reply) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, delay: rep.ChunkDelay, drop: rep.DropAfterEvents}
}

var errDropped = errors.New("providertest: connection dropped as scripted")

// hangUp closes the connection under w without finishing the response.
func hangUp(w http.ResponseWriter) {
	http.NewResponseController(w).Flush()
	if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
		c.Close()
	}
}

func (s *sse) event(name, data string) {
	if s.err != nil {
		return
	}
	if s.drop > 0 && s.n == s.drop {
		s.err = errDropped
		hangUp(s.w)
		return
	}
	if s.n > 0 && s.delay > 0 {
		time.Sleep(s.delay)
	}
	s.n++
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		s.err = err
		return
	}
	s.err = http.NewResponseController(s.w).Flush()
}
