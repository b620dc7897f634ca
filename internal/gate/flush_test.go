package gate

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// flushLog is a ResponseWriter recording what reached it, in order.
type flushLog struct {
	header http.Header
	log    []string
}

func (f *flushLog) Header() http.Header  { return f.header }
func (f *flushLog) WriteHeader(code int) { f.log = append(f.log, "header") }
func (f *flushLog) Write(p []byte) (int, error) {
	f.log = append(f.log, "write "+string(p))
	return len(p), nil
}
func (f *flushLog) Flush() { f.log = append(f.log, "flush") }

func TestHeaderFlushSendsHeadersWithFirstBytes(t *testing.T) {
	rec := &flushLog{header: http.Header{}}
	h := &headerFlush{ResponseWriter: rec}
	h.WriteHeader(http.StatusOK)
	if err := h.FlushError(); err != nil { // the proxy's header-only flush
		t.Fatal(err)
	}
	h.Write([]byte("event: a\n\n"))
	h.FlushError()
	h.Write([]byte("event: b\n\n"))
	h.FlushError()
	h.stop()
	got := strings.Join(rec.log, ", ")
	want := "header, write event: a\n\n, flush, write event: b\n\n, flush"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestHeaderFlushStoppedNeverFlushes(t *testing.T) {
	rec := &flushLog{header: http.Header{}}
	h := &headerFlush{ResponseWriter: rec}
	h.WriteHeader(http.StatusOK)
	h.FlushError()
	h.stop()
	h.late() // a timer that fired as stop ran
	if got, want := strings.Join(rec.log, ", "), "header"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestHeaderFlushLateBody: an upstream that sends its headers and then
// nothing still gets its headers to the client (after headerWait), not
// only with the first body bytes.
func TestHeaderFlushLateBody(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := &headerFlush{ResponseWriter: w}
		defer h.stop()
		w.Header().Set("Content-Type", "text/event-stream")
		h.WriteHeader(http.StatusOK)
		h.FlushError()
		select {
		case <-release: // the client has the headers
		case <-time.After(30 * time.Second):
		}
		h.Write([]byte("data: x\n\n"))
		h.FlushError()
	}))
	defer srv.Close()
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := srv.Client().Get(srv.URL)
		done <- result{resp, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		close(release)
		t.Fatal("the headers never reached the client before the body")
	}
	close(release)
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.resp.Body.Close()
	b, _ := io.ReadAll(r.resp.Body)
	if got, want := string(b), "data: x\n\n"; got != want {
		t.Fatalf("body %q, want %q", got, want)
	}
}
