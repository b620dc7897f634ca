package event

import (
	"sync"
	"time"
)

// maxQueued bounds the decisions a [Queue] holds for its writer. Beyond it
// a decision is written on the caller's goroutine: memory stays bounded
// and nothing is dropped.
const maxQueued = 4096

// Queue records decision events ([TypeDecision]) of a hot path on a
// background writer and every other event — refusals, verifications,
// compromise signals — on the caller's goroutine, after the decisions
// queued before it, so the log keeps the order of the calls.
//
// Why: the provider gate records two decisions per admitted request (the
// egress decision and the gate's admission). Encoding, redacting and
// writing them was ~40 µs of the ~300 µs the gate adds to a request
// (issue 18 performance, docs/PERFORMANCE.md). The durable record of the
// decision is the state database's, committed before any byte leaves;
// the event log is its redacted, human-readable mirror, and a decision's
// line now trails the request by the writer's lag (microseconds on an
// idle machine). A refusal still returns only after its line is written
// ("event": "recorded" in its error stays true).
//
// Close writes what is queued. A process killed without Close loses the
// queued decision lines (at most [maxQueued]); their decisions stay in
// the database. Safe for concurrent use.
type Queue struct {
	inner Sink

	mu      sync.Mutex
	pending []Event
	closed  bool
	wake    chan struct{} // capacity 1: a pending wake-up of the writer
	done    chan struct{} // closed when the writer has returned

	// writeMu orders writes to inner: held by whoever writes a batch.
	writeMu sync.Mutex
}

// NewQueue starts a queue in front of inner. inner must not be nil.
func NewQueue(inner Sink) *Queue {
	q := &Queue{inner: inner, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run()
	return q
}

// Record queues a decision event and returns nil; any other event is
// written, after every event queued before it, before Record returns, and
// Record returns inner's error. A decision whose write fails later is
// lost to the log only (callers ignore a sink's error: a failing log
// must not open or block the gate).
func (q *Queue) Record(e Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC() // the time of the call, not of the write
	}
	q.mu.Lock()
	if e.Type == TypeDecision && !q.closed && len(q.pending) < maxQueued {
		q.pending = append(q.pending, e)
		// Wake the writer under mu: Close closes wake under mu once
		// closed is set, so this send never meets a closed channel.
		select {
		case q.wake <- struct{}{}:
		default:
		}
		q.mu.Unlock()
		return nil
	}
	q.mu.Unlock()
	return q.write(&e)
}

// Flush returns when every event recorded before the call is written.
func (q *Queue) Flush() { q.write(nil) }

// Close writes the queued events and stops the writer. Later events are
// written on the caller's goroutine. Close does not close inner.
func (q *Queue) Close() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	close(q.wake) // under mu: see Record
	q.mu.Unlock()
	<-q.done
	q.Flush()
	return nil
}

// write writes the queued events, then e if not nil, holding writeMu so
// the writer cannot interleave a later batch.
func (q *Queue) write(e *Event) error {
	q.writeMu.Lock()
	defer q.writeMu.Unlock()
	q.drain()
	if e == nil {
		return nil
	}
	return q.inner.Record(*e)
}

// drain writes the queued events; writeMu must be held.
func (q *Queue) drain() {
	q.mu.Lock()
	batch := q.pending
	q.pending = nil
	q.mu.Unlock()
	for _, e := range batch {
		q.inner.Record(e) // see Record: a decision's failed write is the log's loss only
	}
}

func (q *Queue) run() {
	defer close(q.done)
	for range q.wake {
		q.writeMu.Lock()
		q.drain()
		q.writeMu.Unlock()
	}
}
