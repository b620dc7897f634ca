package process

import "sync"

// tail keeps the last limit bytes written; writes never block or fail, so a
// chatty child can never stall on a full stderr pipe.
type tail struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	cut   bool
}

func newTail(limit int) *tail { return &tail{limit: limit} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
