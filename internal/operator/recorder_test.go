package operator

import (
	"sync"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/event"
)

// TestRecorderLimited: the dashboard's refusals are recorded up to a
// burst of recordBurst, then one per recordEvery; the first recorded
// after a refill carries how many were left out (ids.suppressed). A
// frozen clock: no refill but the ones the test makes.
func TestRecorderLimited(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	sink := &event.Memory{}
	rec, err := newRecorder(sink, clock)
	if err != nil {
		t.Fatal(err)
	}
	const flood = recordBurst + 40
	for range flood {
		rec.refusal("POLICY_DENIED", "operator.auth_missing", "GET", "/")
	}
	if n := len(sink.Events()); n != recordBurst {
		t.Errorf("after %d refusals: %d recorded, want %d", flood, n, recordBurst)
	}
	advance(recordEvery - time.Millisecond)
	rec.refusal("POLICY_DENIED", "operator.auth_missing", "GET", "/")
	advance(time.Millisecond)
	rec.refusal("POLICY_DENIED", "operator.auth_missing", "GET", "/")
	evs := sink.Events()
	if len(evs) != recordBurst+1 {
		t.Fatalf("after a refill: %d recorded, want %d", len(evs), recordBurst+1)
	}
	last := evs[len(evs)-1]
	want := map[string]string{"method": "GET", "path": "/", "suppressed": "41"}
	for k, v := range want {
		if last.IDs[k] != v {
			t.Errorf("the first refusal after the refill: ids %v, want %v", last.IDs, want)
			break
		}
	}
	for _, e := range evs[:recordBurst] {
		if _, ok := e.IDs["suppressed"]; ok {
			t.Errorf("a refusal of the burst carries ids.suppressed: %v", e.IDs)
		}
	}
}
