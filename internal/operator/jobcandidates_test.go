package operator

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
)

type revokeNothing struct{}

func (revokeNothing) RevokeJob(context.Context, string) ([]string, error) { return []string{"g1"}, nil }

// TestJobCandidatesQuarantined: a clean job quarantined after the fact
// (issue 16 scope 7) is shown tainted with the quarantine's trigger as its
// reason, needs the "tainted" acknowledgement, and is refused without it
// with nothing written to the checkout.
func TestJobCandidatesQuarantined(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	co := newCheckout(t, state)
	id := co.job(t, map[string]string{"q.txt": "q\n"})
	if _, err := co.jobs.Quarantine(ctx, id, job.Containment{Revoker: revokeNothing{}, Trigger: "compromise.unadmitted_route", Actor: "gate", Events: event.Discard{}}); err != nil {
		t.Fatal(err)
	}
	src := NewJobCandidates(co.jobs, co.adm)
	c, err := src.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Taint, "quarantined (trigger compromise.unadmitted_route, by gate), 1 grant(s) revoked") {
		t.Errorf("taint %q", c.Taint)
	}
	if d := cmp.Diff([]string{"tainted"}, c.Acknowledge); d != "" {
		t.Errorf("acknowledge (-want +got):\n%s", d)
	}
	err = src.Admit(ctx, id, nil)
	if fe := fault.From(err); err == nil || fe.Reason != "admission.taint_unacknowledged" || co.read(t, "q.txt") != "<absent>" {
		t.Errorf("admit without ack: %v, q.txt %q", err, co.read(t, "q.txt"))
	}
	if err := src.Admit(ctx, id, []string{"tainted"}); err != nil || co.read(t, "q.txt") != "q\n" {
		t.Errorf("admit with ack: %v, q.txt %q", err, co.read(t, "q.txt"))
	}
}
