package gate

import (
	"net/http"
	"sync"
	"time"
)

// headerWait bounds how long the response headers of an exchange wait for
// the first body bytes before they are flushed on their own (see
// [headerFlush]).
const headerWait = 20 * time.Millisecond

// headerFlush is the client's ResponseWriter as the proxy sees it: it
// sends the response headers with the first body bytes instead of alone.
// httputil.ReverseProxy, for every streamed response (FlushInterval -1,
// text/event-stream), arms a timer that fires at once and flushes the
// headers before the first body chunk is copied: one more write(2), one
// more TCP segment and one more wake-up of the client per exchange
// (issue 18 performance; nginx sends both in one write). A flush before
// any body byte is deferred by up to headerWait; a body write followed by
// a flush sends headers and bytes together. Nothing the client is owed
// waits: every body flush goes out at once, as before.
//
// Its methods are serialised by mu (the deferred flush runs on a timer's
// goroutine); stop must be called when the handler returns, after which
// the timer no longer touches the ResponseWriter.
type headerFlush struct {
	http.ResponseWriter
	mu      sync.Mutex
	body    bool // a body byte was written
	stopped bool
	timer   *time.Timer
}

// WriteHeader drops informational (1xx) responses: the reverse proxy
// forwards an upstream's 103 Early Hints (or any 1xx) with its headers
// straight from the transport, past modifyResponse and its check, and a
// CLI has no use for them.
func (h *headerFlush) WriteHeader(code int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		return
	}
	h.ResponseWriter.WriteHeader(code)
}

func (h *headerFlush) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(p) > 0 {
		h.body = true
	}
	return h.ResponseWriter.Write(p)
}

// FlushError flushes what was written, or, before the first body byte,
// schedules the headers' flush headerWait from now.
func (h *headerFlush) FlushError() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return nil
	}
	if !h.body {
		if h.timer == nil {
			h.timer = time.AfterFunc(headerWait, h.late)
		}
		return nil
	}
	if h.timer != nil {
		h.timer.Stop()
	}
	return http.NewResponseController(h.ResponseWriter).Flush()
}

// late flushes the headers of a response whose body has not started.
func (h *headerFlush) late() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.stopped {
		http.NewResponseController(h.ResponseWriter).Flush()
	}
}

// stop ends the deferred flush; the handler returns next, and net/http
// then sends whatever is buffered.
func (h *headerFlush) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	if h.timer != nil {
		h.timer.Stop()
	}
}

// Unwrap lets [http.ResponseController] reach the connection's other
// controls (deadlines, full duplex).
func (h *headerFlush) Unwrap() http.ResponseWriter { return h.ResponseWriter }
