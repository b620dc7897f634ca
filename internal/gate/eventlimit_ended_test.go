package gate

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSuppressedFlushedWhenGrantEndsElsewhere: a job's refusals left out
// of the log are recorded (gate.events_suppressed) when its grant ends in
// a way this gate did not make — expiry on the gate's clock, or
// revocation by another process on the same database (`coagent8 gate
// revoke`) — once the watcher notices, not only at Revoke here or Close.
// The clock is frozen: the allowance never refills and expiry happens
// only when the test advances it.
func TestSuppressedFlushedWhenGrantEndsElsewhere(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, f *fixture, gr Grant, advance func(time.Duration))
	}{
		{"expiry", func(t *testing.T, f *fixture, gr Grant, advance func(time.Duration)) { advance(time.Hour) }},
		{"revoked by another process", func(t *testing.T, f *fixture, gr Grant, _ func(time.Duration)) {
			other, err := New(context.Background(), Options{DB: f.db, Key: f.gate.opts.Key, Egress: f.egress})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if err := other.Revoke(context.Background(), gr.ID); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			now := time.Now()
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
			f := newFixture(t, func(o *Options) { o.Now = clock; o.WatchInterval = 10 * time.Millisecond })
			s := spec(Anthropic)
			s.TTL = time.Minute
			gr, phantom := f.grant(s)
			for range eventBurst + 20 {
				readAll(t, f.call(Anthropic, phantom, "another-model", false))
			}
			tc.end(t, f, gr, advance)
			want := []map[string]string{{"job": gr.Job, "suppressed": "20"}}
			var got []map[string]string
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				got = nil
				for _, e := range f.events.Events() {
					if e.Reason == ReasonEventsSuppressed {
						got = append(got, e.IDs)
					}
				}
				if len(got) > 0 {
					break
				}
			}
			if !cmp.Equal(got, want) {
				t.Errorf("summary events before Close %v, want %v", got, want)
			}
		})
	}
}
