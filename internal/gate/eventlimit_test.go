package gate

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/event"
)

// TestFreeEventsLimited (sandbox red team: a refused-request loop wrote
// 8.6 MB/s to the host's event log): refusals a client causes without
// spending budget are recorded up to a burst, then at the limit's rate,
// per job; the next event recorded carries how many were left out; the
// refusal counters count every one; another job's refusals keep their own
// allowance; what is still left out is recorded when the job's grant ends
// (and, for every job, when the gate closes).
func TestFreeEventsLimited(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	f := newFixture(t, func(o *Options) { o.Now = clock })
	gr, phantom := f.grant(spec(Anthropic))
	count := func(reason string) (n int, suppressed []string) {
		for _, e := range f.events.Events() {
			if e.Reason == reason {
				n++
				if s := e.IDs["suppressed"]; s != "" {
					suppressed = append(suppressed, s)
				}
			}
		}
		return n, suppressed
	}
	const flood = eventBurst + 150
	for range flood {
		readAll(t, f.call(Anthropic, "", gr.Model, false)) // no credential
	}
	if n, s := count(ReasonNoCredential); n != eventBurst || len(s) != 0 {
		t.Errorf("after %d anonymous refusals: %d recorded (suppressed %v), want %d", flood, n, s, eventBurst)
	}
	if got := f.gate.Refusals()[ReasonNoCredential]; got != flood {
		t.Errorf("refusal counter %d, want %d", got, flood)
	}
	// The grant's own refusals have their own allowance.
	readAll(t, f.call(Anthropic, phantom, "another-model", false))
	if n, _ := count(ReasonModel); n != 1 {
		t.Errorf("the job's refusal after the anonymous flood: %d recorded, want 1", n)
	}
	advance(time.Second / eventRate)
	readAll(t, f.call(Anthropic, "", gr.Model, false))
	if n, s := count(ReasonNoCredential); n != eventBurst+1 || len(s) != 1 || s[0] != "150" {
		t.Errorf("after a refill: %d recorded, suppressed %v; want %d and [150]", n, s, eventBurst+1)
	}

	// The job floods too (its allowance refilled to the burst by the
	// advance above); revoking its grant records what was left out.
	for range eventBurst + 20 {
		readAll(t, f.call(Anthropic, phantom, "another-model", false))
	}
	if err := f.gate.Revoke(context.Background(), gr.ID); err != nil {
		t.Fatal(err)
	}
	var summary []map[string]string
	for _, e := range f.events.Events() {
		if e.Reason == ReasonEventsSuppressed {
			summary = append(summary, e.IDs)
		}
	}
	if want := []map[string]string{{"job": gr.Job, "suppressed": "20"}}; !cmp.Equal(summary, want) {
		t.Errorf("summary events %v, want %v", summary, want)
	}
	// Anonymous refusals left out are accounted for when the gate closes.
	for range 3 {
		readAll(t, f.call(Anthropic, "", gr.Model, false))
	}
	f.gate.flushSuppressed(nil)
	if n, _ := count(ReasonEventsSuppressed); n != 2 {
		t.Errorf("%d summary events after the flush, want 2 (the job's, the anonymous)", n)
	}
}

// TestFreeEventsLimitCannotHide (red team of the limit): what a client
// cannot keep out of the log by spending an allowance first. A job's
// flood of refusals without a credential, through its own channel
// (ForJob), spent the one anonymous allowance of the shared gate, and
// another job's anonymous refusals went unrecorded; a job that spent its
// allowance, then probed an unadmitted route with its phantom, was
// contained, but the refusal naming the route it probed went unrecorded.
func TestFreeEventsLimitCannotHide(t *testing.T) {
	tests := []struct {
		name   string
		flood  string // the job whose channel floods
		send   func(f *fixture, phantom, model string) *http.Response
		reason string // must be recorded after the flood
	}{
		{"another job's anonymous refusal", "job-2", func(f *fixture, _, m string) *http.Response {
			return f.call(Anthropic, "", m, false)
		}, ReasonNoCredential},
		{"the refusal of a contained request", "job-1", func(f *fixture, ph, m string) *http.Response {
			return send(f, "POST", "/v1/complete", `{"model":"`+m+`"}`, map[string]string{"X-Api-Key": ph})
		}, ReasonRoute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Now() // frozen: no allowance refills during the flood
			f := newFixture(t, func(o *Options) { o.Now = func() time.Time { return now } })
			gr, phantom := f.grant(spec(Anthropic)) // job-1
			f.srv.Config.Handler = f.gate.ForJob(tt.flood)
			for range eventBurst + 20 {
				readAll(t, f.call(Anthropic, "", gr.Model, false))
			}
			f.srv.Config.Handler = f.gate.ForJob("job-1")
			before := len(f.events.Events())
			readAll(t, tt.send(f, phantom, gr.Model))
			n := 0
			for _, e := range f.events.Events()[before:] {
				if e.Reason == tt.reason {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%s after job %s's flood: %d recorded, want 1", tt.reason, tt.flood, n)
			}
		})
	}
}

// TestFreeEventsLimitKeysBounded: past maxEventKeys allowances the
// limiter starts afresh, and the events it had left out are still
// accounted for. The reset dropped them: a job flooding refusals while
// other jobs' channels made their first events lost its count.
func TestFreeEventsLimitKeysBounded(t *testing.T) {
	now := time.Now() // frozen: no allowance refills under a slow (-race) run
	f := newFixture(t, func(o *Options) { o.Now = func() time.Time { return now } })
	refusal := func(job string) event.Event {
		return event.Event{Type: event.TypeRefusal, Reason: ReasonNoCredential, IDs: map[string]string{"job": job}}
	}
	for range eventBurst + 7 {
		f.gate.recordLimited("job-flood", refusal("job-flood"))
	}
	for i := range maxEventKeys {
		f.gate.recordLimited(fmt.Sprint("job-", i), refusal(fmt.Sprint("job-", i)))
	}
	f.gate.flushSuppressed(nil)
	total := 0
	for _, e := range f.events.Events() {
		if n, err := strconv.Atoi(e.IDs["suppressed"]); err == nil && e.IDs["job"] == "job-flood" {
			total += n
		}
	}
	if total != 7 {
		t.Errorf("job-flood's events left out, as recorded: %d, want 7", total)
	}
	if n := f.gate.events.Len(); n > maxEventKeys {
		t.Errorf("%d allowances kept, want at most %d", n, maxEventKeys)
	}
}

// TestRepeatedSignalsLimited: a phantom sent on and on to an unadmitted
// route raises a containment signal each time, also once its job is
// contained, and each wrote a compromise event and its refusal with no
// limit (the refused-request flood, moved to another route). The job's
// first signal is recorded in full; the repeats within their own
// allowance, the rest accounted for (gate.signals) when the gate closes.
func TestRepeatedSignalsLimited(t *testing.T) {
	// A frozen clock: no allowance refills while the probes run (under
	// -race they take long enough to refill at the real rate).
	now := time.Now()
	f := newFixture(t, func(o *Options) { o.Now = func() time.Time { return now } })
	gr, phantom := f.grant(spec(Anthropic))
	const probes = eventBurst + 200
	for range probes {
		readAll(t, send(f, "POST", "/v1/complete", `{"model":"`+gr.Model+`"}`, map[string]string{"X-Api-Key": phantom}))
	}
	f.gate.flushSuppressed(nil)
	recorded := map[string]int{}
	suppressed := 0
	for _, e := range f.events.Events() {
		recorded[e.Reason]++
		if n, err := strconv.Atoi(e.IDs["suppressed"]); err == nil && e.IDs["job"] == gr.Job {
			suppressed += n
		}
	}
	// The first signal's two events are recorded in full; the repeats'
	// 2×(probes-1) share one allowance of eventBurst.
	if got, max := recorded[SignalRoute]+recorded[ReasonRoute], 2+eventBurst; got > max || recorded[SignalRoute] == 0 || recorded[ReasonRoute] == 0 {
		t.Errorf("%d probes: %d compromise events and %d refusals recorded, want both, at most %d together", probes, recorded[SignalRoute], recorded[ReasonRoute], max)
	}
	if got := recorded[SignalRoute] + recorded[ReasonRoute] + suppressed; got != 2*probes {
		t.Errorf("recorded plus suppressed: %d, want %d (every probe's two events accounted for)", got, 2*probes)
	}
	// The accounting is no flood of its own: each repeat revoked nothing,
	// so no grant ended and nothing was flushed until the gate closed.
	if n := recorded[ReasonEventsSuppressed]; n > 2 {
		t.Errorf("%d %s events, want at most 2 (one per allowance, at the close)", n, ReasonEventsSuppressed)
	}
}
