package operator

import (
	"strconv"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/event"
)

// Event recording limits: refusals are recorded up to a burst of 30, then
// one every two seconds; the ones in between are counted and the count is
// carried by the next recorded event, so a flood cannot fill the disk yet
// nothing goes unaccounted.
const (
	recordBurst = 30
	recordEvery = 2 * time.Second
)

// recorder writes the dashboard's security events, rate-limited.
type recorder struct {
	sink   event.Sink
	budget *bucket

	mu         sync.Mutex
	suppressed int
}

func newRecorder(sink event.Sink, now func() time.Time) *recorder {
	return &recorder{sink: sink, budget: newBucket(recordBurst, recordEvery, now)}
}

// refusal records a refused request: its reason, method and path (never
// header values, the credential or the query).
func (r *recorder) refusal(code, reason, method, path string) {
	if ok, _ := r.budget.take(); !ok {
		r.mu.Lock()
		r.suppressed++
		r.mu.Unlock()
		return
	}
	e := event.Event{Type: event.TypeRefusal, Code: code, Reason: reason, Rule: "operator",
		IDs: map[string]string{"method": method, "path": path}}
	r.mu.Lock()
	if r.suppressed > 0 {
		e.IDs["suppressed"] = strconv.Itoa(r.suppressed)
		r.suppressed = 0
	}
	r.mu.Unlock()
	_ = r.sink.Record(e) // a refusal refuses whether or not it was recorded
}
