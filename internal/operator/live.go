package operator

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// hub tells server-sent-event subscribers that the state changed: a
// version number that only grows, and a channel closed on each change.
type hub struct {
	mu      sync.Mutex
	version uint64
	ch      chan struct{}
}

func newHub() *hub { return &hub{ch: make(chan struct{})} }

// bump records a change and wakes every waiter.
func (h *hub) bump() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.version++
	close(h.ch)
	h.ch = make(chan struct{})
}

// current returns the version and a channel closed at the next change.
func (h *hub) current() (uint64, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.version, h.ch
}

// watch polls the event log and the state database for changes until ctx
// ends. PRAGMA data_version on one pinned connection changes whenever
// another connection (another process: the MCP server, the gate)
// commits, so a poll costs one tiny query and one stat.
func (s *Server) watch(ctx context.Context) {
	conn, err := s.db.SQL().Conn(ctx)
	if err != nil {
		s.opts.Logger.Warn("operator: live updates of the state database unavailable", "error", err.Error())
	} else {
		defer conn.Close()
		// The pinned connection may be the one whose page cache the
		// integrity check at open filled; it only ever reads one pragma.
		conn.ExecContext(ctx, "PRAGMA shrink_memory")
	}
	var last int64 = -1
	t := time.NewTicker(s.opts.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.trim.maybe(time.Now())
		changed := s.tail.refresh()
		if conn != nil {
			var v int64
			if conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v) == nil && v != last {
				changed = changed || last != -1
				last = v
			}
		}
		if changed {
			s.hub.bump()
		}
	}
}

// serveLive is GET /live: a text/event-stream that sends "change" with
// the state version whenever it changes, and a comment every 15 s to keep
// the connection open. The page then fetches its own fragment again.
func (s *Server) serveLive(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	v, ch := s.hub.current()
	fmt.Fprintf(w, "retry: 2000\nevent: hello\ndata: %d\n\n", v)
	fl.Flush()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-ch:
			v, ch = s.hub.current()
			fmt.Fprintf(w, "event: change\ndata: %d\n\n", v)
		}
		fl.Flush()
	}
}
