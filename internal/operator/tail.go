package operator

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"sync"

	"github.com/coagent8/coagent8/internal/event"
)

// Event tail limits: the dashboard keeps the newest 10,000 security events
// in memory, reads at most 8 MiB of a large log's end at start and at most
// 4 MiB per refresh, so a huge log costs bounded memory and time.
const (
	tailKeep    = 10000
	tailStart   = 8 << 20
	tailPerPoll = 4 << 20
)

// eventTail follows events.jsonl by offset. Safe for concurrent use.
type eventTail struct {
	path string

	mu      sync.Mutex
	offset  int64
	partial []byte
	ring    []event.Event // oldest first, at most tailKeep
	seen    int           // events read since start
}

// refresh reads what was appended since the last call and reports
// whether anything new arrived. A file that shrank (rotated or replaced)
// is read again from its start.
func (t *eventTail) refresh() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := os.Open(t.path)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false
	}
	size := st.Size()
	if size < t.offset {
		t.offset, t.partial, t.ring = 0, nil, nil
	}
	skipFirst := false
	if t.offset == 0 && size > tailStart {
		t.offset, skipFirst = size-tailStart, true
	}
	n := min(size-t.offset, tailPerPoll)
	if n <= 0 {
		return false
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, t.offset); err != nil && err != io.EOF {
		return false
	}
	t.offset += n
	return t.consume(buf, skipFirst) > 0
}

// consume parses complete lines of buf (after any partial line kept from
// the previous read) and returns how many events it added.
func (t *eventTail) consume(buf []byte, skipFirst bool) int {
	data := append(t.partial, buf...)
	last := bytes.LastIndexByte(data, '\n')
	if last < 0 {
		t.partial = data
		return 0
	}
	t.partial = append([]byte(nil), data[last+1:]...)
	lines := bytes.Split(data[:last], []byte{'\n'})
	if skipFirst && len(lines) > 0 {
		lines = lines[1:]
	}
	added := 0
	for _, l := range lines {
		var e event.Event
		if json.Unmarshal(l, &e) == nil {
			t.ring = append(t.ring, e)
			added++
		}
	}
	if over := len(t.ring) - tailKeep; over > 0 {
		t.ring = append([]event.Event(nil), t.ring[over:]...)
	}
	t.seen += added
	return added
}

// newest returns up to limit kept events that keep accepts, newest
// first, and how many matched in all.
func (t *eventTail) newest(limit int, keep func(*event.Event) bool) (out []event.Event, matched int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.ring) - 1; i >= 0; i-- {
		if !keep(&t.ring[i]) {
			continue
		}
		if matched++; len(out) < limit {
			out = append(out, t.ring[i])
		}
	}
	return out, matched
}

// each calls fn for every kept event, oldest first, under the lock (fn
// must not keep e).
func (t *eventTail) each(fn func(e *event.Event)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.ring {
		fn(&t.ring[i])
	}
}

// kept returns how many events are kept.
func (t *eventTail) kept() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ring)
}
