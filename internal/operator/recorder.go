package operator

import (
	"time"

	"github.com/coagent8/coagent8/internal/allowance"
	"github.com/coagent8/coagent8/internal/event"
)

// Event recording limits: refusals are recorded up to a burst of 30, then
// one every two seconds; the ones in between are counted and the count is
// carried by the next recorded event (ids.suppressed), so a flood cannot
// fill the disk yet nothing goes unaccounted. One allowance for the
// listener: a refused request has no identity to key by.
const (
	recordBurst = 30
	recordEvery = 2 * time.Second
)

// recorder writes the dashboard's security events, rate-limited.
type recorder struct {
	sink   event.Sink
	budget *allowance.Limiter
}

// newRecorder returns the recorder of sink on clock now.
func newRecorder(sink event.Sink, now func() time.Time) (*recorder, error) {
	budget, err := allowance.New(allowance.Config{Burst: recordBurst, Every: recordEvery, MaxKeys: 1, Now: now})
	if err != nil {
		return nil, err
	}
	return &recorder{sink: sink, budget: budget}, nil
}

// refusal records a refused request: its reason, method and path (never
// header values, the credential or the query).
func (r *recorder) refusal(code, reason, method, path string) {
	ok, carried, _ := r.budget.Admit("") // one key: nothing is ever dropped
	if !ok {
		return
	}
	ids := allowance.Carry(map[string]string{"method": method, "path": path}, carried)
	e := event.Event{Type: event.TypeRefusal, Code: code, Reason: reason, Rule: "operator", IDs: ids}
	_ = r.sink.Record(e) // a refusal refuses whether or not it was recorded
}
