package egress

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

const hrReview = "Performance review for a named employee: needs improvement in communication."

// floodFixture is a decider whose policy refuses the hr review as
// forbidden (0.9 at forbidden 0.8) rather than as a category, on the
// fixture's frozen clock.
func floodFixture(t *testing.T) *fixture {
	c := baseConfig()
	c.NonDeclassifiable = nil
	return newFixture(t, c)
}

// sealRefused seals x n times and fails unless each is refused for
// reason; it returns how many were marked recorded and limited.
func sealRefused(t *testing.T, f *fixture, x Transmission, n int, reason string) (recorded, limited int) {
	t.Helper()
	for i := range n {
		_, err := f.d.Seal(context.Background(), x)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Reason != reason {
			t.Fatalf("transmission %d: %v, want refused %s", i, err, reason)
		}
		switch fe.Details["event"] {
		case EventRecorded:
			recorded++
		case EventLimited:
			limited++
		default:
			t.Fatalf("transmission %d: event mark %q", i, fe.Details["event"])
		}
	}
	return recorded, limited
}

// tally is what the ledger and the event log hold for reason: rows and
// events, and the suppressed counts they carry.
type tally struct{ rows, rowSuppressed, events, eventSuppressed int }

func (f *fixture) tally(t *testing.T, reason string) tally {
	t.Helper()
	recs, err := f.led.Records(context.Background(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var got tally
	for _, r := range recs {
		if r.Reason == reason {
			got.rows++
			got.rowSuppressed += int(r.Suppressed)
		}
	}
	for _, e := range f.events.Events() {
		if e.Reason == reason {
			got.events++
			n, _ := strconv.Atoi(e.IDs["suppressed"])
			got.eventSuppressed += n
		}
	}
	return got
}

// TestRefusalFloodBounded (known gap: a delegated agent looping on a
// refused post wrote one event and one egress_record row per request,
// 300 posts → 300 of each): each of 300 refused transmissions of one job
// is refused, yet only refusalBurst are recorded; the first recorded
// after a refill carries the 200 left out, in its row and its event; what
// is left out after is recorded when the job's grant ends. Frozen clock.
func TestRefusalFloodBounded(t *testing.T) {
	f := floodFixture(t)
	const flood = 300
	recorded, limited := sealRefused(t, f, tx(t, hrReview), flood, ReasonForbidden)
	if recorded != refusalBurst || limited != flood-refusalBurst {
		t.Errorf("marks: %d recorded, %d limited; want %d, %d", recorded, limited, refusalBurst, flood-refusalBurst)
	}
	if got, want := f.tally(t, ReasonForbidden), (tally{rows: refusalBurst, events: refusalBurst}); got != want {
		t.Errorf("after %d refusals: %+v, want %+v", flood, got, want)
	}

	f.clock = f.clock.Add(refusalEvery)
	sealRefused(t, f, tx(t, hrReview), 1, ReasonForbidden)
	want := tally{rows: refusalBurst + 1, rowSuppressed: flood - refusalBurst, events: refusalBurst + 1, eventSuppressed: flood - refusalBurst}
	if got := f.tally(t, ReasonForbidden); got != want {
		t.Errorf("after a refill: %+v, want %+v", got, want)
	}

	sealRefused(t, f, tx(t, hrReview), 5, ReasonForbidden)
	f.d.FlushRefusals(context.Background(), "job-2") // another job's: nothing of job-1's
	if got := f.tally(t, ReasonRefusalsSuppressed); got != (tally{}) {
		t.Errorf("after another job's flush: %+v, want none", got)
	}
	f.d.FlushRefusals(context.Background(), "job-1")
	if got, want := f.tally(t, ReasonRefusalsSuppressed), (tally{rows: 1, rowSuppressed: 5, events: 1, eventSuppressed: 5}); got != want {
		t.Errorf("summary after the job's flush: %+v, want %+v", got, want)
	}
	for _, e := range f.events.Events() {
		if e.Reason == ReasonRefusalsSuppressed && (e.IDs["job"] != "job-1" || e.Rule != ruleRefusals || e.IDs["decision"] == "") {
			t.Errorf("summary event %+v, want job job-1, rule %s and a decision digest", e, ruleRefusals)
		}
	}
}

// TestRefusalLimitPerJob: another job's refusals keep their own
// allowance after one job's flood.
func TestRefusalLimitPerJob(t *testing.T) {
	f := floodFixture(t)
	sealRefused(t, f, tx(t, hrReview), refusalBurst+20, ReasonForbidden)
	other := tx(t, hrReview)
	other.Job = "job-2"
	if recorded, _ := sealRefused(t, f, other, 3, ReasonForbidden); recorded != 3 {
		t.Errorf("job-2 after job-1's flood: %d of 3 recorded", recorded)
	}
}

// TestContainmentRefusalsCannotHide: a refusal that can raise a
// containment signal (a credential in the request) is recorded for a job
// that spent its allowance first, and its repeats have their own
// allowance, accounted for like the others (rule egress.containment).
func TestContainmentRefusalsCannotHide(t *testing.T) {
	f := floodFixture(t)
	sealRefused(t, f, tx(t, hrReview), refusalBurst+20, ReasonForbidden)
	cred := tx(t, "key="+syntheticKey())
	if recorded, _ := sealRefused(t, f, cred, 1, ReasonCategory); recorded != 1 {
		t.Fatal("the job's first credential refusal after its flood was not recorded")
	}
	const repeats = refusalBurst + 30
	recorded, limited := sealRefused(t, f, cred, repeats, ReasonCategory)
	if recorded != refusalBurst || limited != 30 {
		t.Errorf("repeats: %d recorded, %d limited; want %d, 30", recorded, limited, refusalBurst)
	}
	f.d.FlushAllRefusals(context.Background())
	rules := map[string]int{}
	for _, e := range f.events.Events() {
		if e.Reason == ReasonRefusalsSuppressed {
			n, _ := strconv.Atoi(e.IDs["suppressed"])
			rules[e.Rule] += n
		}
	}
	if rules[ruleRefusals] != 20 || rules[ruleContainment] != 30 {
		t.Errorf("summaries by rule %v, want %s 20 and %s 30", rules, ruleRefusals, ruleContainment)
	}
	if got := f.tally(t, ReasonCategory); got.rows != 1+refusalBurst || got.events != 1+refusalBurst {
		t.Errorf("credential refusals recorded: %+v, want %d rows and events", got, 1+refusalBurst)
	}
}

// TestRefusalLimitRefill: the allowance refills at one per refusalEvery
// on the decider's clock, not the wall clock.
func TestRefusalLimitRefill(t *testing.T) {
	f := floodFixture(t)
	sealRefused(t, f, tx(t, hrReview), refusalBurst+1, ReasonForbidden)
	for _, step := range []struct {
		advance time.Duration
		want    int // recorded of 2
	}{{0, 0}, {refusalEvery - time.Millisecond, 0}, {time.Millisecond, 1}, {3 * refusalEvery, 2}} {
		f.clock = f.clock.Add(step.advance)
		if got, _ := sealRefused(t, f, tx(t, hrReview), 2, ReasonForbidden); got != step.want {
			t.Errorf("after +%v: %d of 2 recorded, want %d", step.advance, got, step.want)
		}
	}
}
