package operator

import (
	"context"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/doctor"
)

// doctorTimeout bounds one overview probe (backend metadata probes only;
// no prompt is sent).
const doctorTimeout = 60 * time.Second

// overview caches the doctor report the overview shows: probed once at
// start and again on the operator's request, never per page view (a probe
// starts the backend CLIs).
type overview struct {
	run     func(context.Context) doctor.Report
	changed func()

	mu      sync.Mutex
	report  *doctor.Report
	at      time.Time
	probing bool
}

// refresh runs the doctor unless a run is already going.
func (o *overview) refresh(ctx context.Context) {
	if o.run == nil {
		return
	}
	o.mu.Lock()
	if o.probing {
		o.mu.Unlock()
		return
	}
	o.probing = true
	o.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	r := o.run(ctx)
	o.mu.Lock()
	o.report, o.at, o.probing = &r, time.Now().UTC(), false
	o.mu.Unlock()
	o.changed()
}

// get returns the last report (nil before the first), when it was made
// and whether a probe runs now.
func (o *overview) get() (*doctor.Report, time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.report, o.at, o.probing
}
