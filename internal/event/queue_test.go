package event

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedSink blocks every Record until release is closed, so a test can
// hold the queue's writer mid-batch.
type gatedSink struct {
	Memory
	release chan struct{}
}

func (s *gatedSink) Record(e Event) error {
	<-s.release
	return s.Memory.Record(e)
}

func reasons(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Reason
	}
	return out
}

func TestQueueKeepsCallOrder(t *testing.T) {
	mem := &Memory{}
	q := NewQueue(mem)
	calls := []Event{{Type: TypeDecision, Reason: "d1"}, {Type: TypeDecision, Reason: "d2"},
		{Type: TypeRefusal, Reason: "r1"}, {Type: TypeDecision, Reason: "d3"}, {Type: TypeVerification, Reason: "v1"}}
	for _, e := range calls {
		q.Record(e)
	}
	q.Close()
	got, want := fmt.Sprint(reasons(mem.Events())), "[d1 d2 r1 d3 v1]"
	if got != want {
		t.Errorf("order = %s, want %s", got, want)
	}
}

// What is written when a call returns, the writer still running: a
// refusal after the decisions queued before it (its error's "event":
// "recorded" stays true), and everything before a Flush.
func TestQueueWrittenBeforeReturn(t *testing.T) {
	tests := []struct {
		name string
		last func(*Queue)
		want string
	}{
		{"refusal", func(q *Queue) { q.Record(Event{Type: TypeRefusal, Reason: "denied"}) }, "[admitted denied]"},
		{"flush", (*Queue).Flush, "[admitted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := &Memory{}
			q := NewQueue(mem)
			defer q.Close()
			q.Record(Event{Type: TypeDecision, Reason: "admitted"})
			tt.last(q)
			if got := fmt.Sprint(reasons(mem.Events())); got != tt.want {
				t.Errorf("written when the call returned: %s, want %s", got, tt.want)
			}
		})
	}
}

func TestQueueDecisionDoesNotWaitForWriter(t *testing.T) {
	s := &gatedSink{release: make(chan struct{})}
	q := NewQueue(s)
	done := make(chan struct{})
	go func() {
		for i := 0; i < 10; i++ {
			q.Record(Event{Type: TypeDecision, Reason: fmt.Sprint(i)})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("decisions waited for a blocked writer")
	}
	close(s.release)
	q.Close()
	if got, want := len(s.Events()), 10; got != want {
		t.Errorf("%d events after Close, want %d", got, want)
	}
}

// Beyond maxQueued pending decisions a decision is written on the
// caller's goroutine: with the writer blocked mid-batch, callers stop
// after at most the writer's batch plus maxQueued, and nothing is dropped.
func TestQueueBoundedWithoutLoss(t *testing.T) {
	s := &gatedSink{release: make(chan struct{})}
	q := NewQueue(s)
	const n = 3 * maxQueued
	var returned atomic.Int64
	go func() {
		for i := 0; i < n; i++ {
			q.Record(Event{Type: TypeDecision, Reason: fmt.Sprint(i)})
			returned.Add(1)
		}
	}()
	time.Sleep(200 * time.Millisecond)
	if got := returned.Load(); got >= n || got > 2*maxQueued+1 {
		t.Errorf("%d of %d decisions returned with the writer blocked, want at most %d", got, n, 2*maxQueued+1)
	}
	close(s.release)
	for returned.Load() < n {
		time.Sleep(time.Millisecond)
	}
	q.Close()
	evs := s.Events()
	if got, want := len(evs), n; got != want {
		t.Fatalf("%d events, want %d", got, want)
	}
	for i, e := range evs {
		if e.Reason != fmt.Sprint(i) {
			t.Fatalf("event %d is %q: order lost", i, e.Reason)
		}
	}
}

func TestQueueStampsTimeOfCall(t *testing.T) {
	s := &gatedSink{release: make(chan struct{})}
	q := NewQueue(s)
	before := time.Now()
	q.Record(Event{Type: TypeDecision, Reason: "d"})
	time.Sleep(20 * time.Millisecond)
	close(s.release)
	q.Close()
	e := s.Events()[0]
	if e.Time.Before(before) || e.Time.Sub(before) > 10*time.Millisecond {
		t.Errorf("event time %v, want the time of the call (%v)", e.Time, before)
	}
}

func TestQueueAfterCloseWritesSynchronously(t *testing.T) {
	mem := &Memory{}
	q := NewQueue(mem)
	q.Close()
	q.Close() // idempotent
	q.Record(Event{Type: TypeDecision, Reason: "late"})
	if got, want := fmt.Sprint(reasons(mem.Events())), "[late]"; got != want {
		t.Errorf("after Close: %s, want %s", got, want)
	}
}

// Concurrent callers: every event written once, each caller's own events
// in its order (run with -race).
func TestQueueConcurrent(t *testing.T) {
	mem := &Memory{}
	q := NewQueue(mem)
	const callers, each = 8, 500
	var wg sync.WaitGroup
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				typ := TypeDecision
				if i%7 == 0 {
					typ = TypeRefusal
				}
				q.Record(Event{Type: typ, Backend: fmt.Sprint(c), Reason: fmt.Sprint(i)})
			}
		}()
	}
	wg.Wait()
	q.Close()
	last := map[string]int{}
	for _, e := range mem.Events() {
		var i int
		fmt.Sscan(e.Reason, &i)
		if prev, ok := last[e.Backend]; ok && i != prev+1 {
			t.Fatalf("caller %s: event %d after %d", e.Backend, i, prev)
		}
		last[e.Backend] = i
	}
	if got, want := len(mem.Events()), callers*each; got != want {
		t.Errorf("%d events, want %d", got, want)
	}
}

// Close while callers record decisions (a gate closing under load, as
// `gate serve` does on SIGTERM): no panic, and every event is written.
// A decision queued just before Close used to wake the writer after Close
// had closed the wake channel: a send on a closed channel, a panic.
func TestQueueCloseDuringRecord(t *testing.T) {
	for round := 0; round < 300; round++ {
		mem := &Memory{}
		q := NewQueue(mem)
		const callers, each = 4, 50
		var wg sync.WaitGroup
		start := make(chan struct{})
		for c := 0; c < callers; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := 0; i < each; i++ {
					q.Record(Event{Type: TypeDecision, Reason: fmt.Sprint(i)})
				}
			}()
		}
		close(start)
		q.Close()
		wg.Wait()
		q.Flush()
		if got, want := len(mem.Events()), callers*each; got != want {
			t.Fatalf("round %d: %d events, want %d", round, got, want)
		}
	}
}
