package operator

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
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
	ring    []keptEvent // oldest first, at most tailKeep
	seen    int         // events read since start
	strs    interner
}

// keptEvent is a security event as the tail keeps it: its repeated
// fields interned and its ids as key/value pairs instead of a map. A
// decoded event.Event took about 570 bytes, 300 of them the ids map;
// this form about half (issue 17: idle RSS; 10,000 kept events were
// 5.5 MiB of heap).
type keptEvent struct {
	e   event.Event // IDs nil
	ids []string    // key, value, key, value, ... sorted by key
}

// event returns the event with its ids map rebuilt (the caller owns it).
func (k *keptEvent) event() event.Event {
	return k.into(nil)
}

// into returns the event with its ids in ids, cleared first (nil = a new
// map): a scan over every kept event reuses one map instead of
// allocating 10,000.
func (k *keptEvent) into(ids map[string]string) event.Event {
	e := k.e
	if len(k.ids) == 0 {
		return e
	}
	if ids == nil {
		ids = make(map[string]string, len(k.ids)/2)
	}
	clear(ids)
	for i := 0; i < len(k.ids); i += 2 {
		ids[k.ids[i]] = k.ids[i+1]
	}
	e.IDs = ids
	return e
}

// keep converts a decoded event, interning what repeats across events
// (types, codes, reasons, backends, models, rules, id names).
func (t *eventTail) keep(e event.Event) keptEvent {
	k := keptEvent{e: e}
	f := &k.e
	for _, p := range []*string{&f.Code, &f.Reason, &f.Backend, &f.Model, &f.Rule} {
		*p = t.strs.get(*p)
	}
	f.Type = event.Type(t.strs.get(string(f.Type)))
	f.IDs = nil
	if len(e.IDs) > 0 {
		k.ids = make([]string, 0, 2*len(e.IDs))
		for _, name := range slices.Sorted(maps.Keys(e.IDs)) {
			k.ids = append(k.ids, t.strs.get(name), e.IDs[name])
		}
	}
	return k
}

// compact moves the strings of the events kept from index from on that
// were not interned (details, id values) into one string and their id
// pairs into one slice: decoding allocated each among the transient
// values of every line read, and a few survivors then keep many mostly
// free heap spans in use (issue 17: idle RSS).
func (t *eventTail) compact(from int) {
	var b strings.Builder
	pairs := 0
	for i := from; i < len(t.ring); i++ {
		k := &t.ring[i]
		b.WriteString(k.e.Detail)
		for j := 1; j < len(k.ids); j += 2 {
			b.WriteString(k.ids[j])
		}
		pairs += len(k.ids)
	}
	all, ids := b.String(), make([]string, 0, pairs)
	cut := func(s string) string {
		v := all[:len(s)]
		all = all[len(s):]
		return v
	}
	for i := from; i < len(t.ring); i++ {
		k := &t.ring[i]
		k.e.Detail = cut(k.e.Detail)
		start := len(ids)
		for j := 0; j < len(k.ids); j += 2 {
			ids = append(ids, k.ids[j], cut(k.ids[j+1]))
		}
		k.ids = ids[start:len(ids):len(ids)]
	}
}

// interner maps a string to one shared copy, for at most internMax
// distinct strings (a log with more distinct reasons or names just
// keeps its own copies).
type interner map[string]string

const internMax = 4096

func (m *interner) get(s string) string {
	if v, ok := (*m)[s]; ok || s == "" {
		return v
	}
	if *m == nil {
		*m = interner{}
	}
	if len(*m) >= internMax {
		return s
	}
	// A copy of its own: s was allocated among transient values.
	c := strings.Clone(s)
	(*m)[c] = c
	return c
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
		t.offset, t.partial, t.ring, t.strs = 0, nil, nil, nil
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
	added, from := 0, len(t.ring)
	for _, l := range lines {
		var e event.Event
		if json.Unmarshal(l, &e) == nil {
			t.ring = append(t.ring, t.keep(e))
			added++
		}
	}
	t.compact(from)
	if over := len(t.ring) - tailKeep; over > 0 {
		t.ring = append([]keptEvent(nil), t.ring[over:]...)
	}
	t.seen += added
	return added
}

// newest returns up to limit kept events that keep accepts, newest
// first, and how many matched in all. keep must not keep e or its IDs
// map (reused for the next event); the events returned are the
// caller's.
func (t *eventTail) newest(limit int, keep func(*event.Event) bool) (out []event.Event, matched int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	scratch := map[string]string{}
	for i := len(t.ring) - 1; i >= 0; i-- {
		e := t.ring[i].into(scratch)
		if !keep(&e) {
			continue
		}
		if matched++; len(out) < limit {
			out = append(out, t.ring[i].event())
		}
	}
	return out, matched
}

// each calls fn for every kept event, oldest first, under the lock (fn
// must not keep e or its IDs map, which is reused for the next event;
// the strings are immutable and may be kept).
func (t *eventTail) each(fn func(e *event.Event)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	scratch := map[string]string{}
	for i := range t.ring {
		e := t.ring[i].into(scratch)
		fn(&e)
	}
}

// kept returns how many events are kept.
func (t *eventTail) kept() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ring)
}
