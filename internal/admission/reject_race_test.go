package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
)

// TestRejectHoldsOffAdmission: an admission that starts while a rejection
// has checked the job but not yet rejected it must not write the
// checkout. Before, Reject only looked for a pending marker, so the
// admission passed its checks under its own lock and wrote the checkout
// (here the rejection then failed, "job is admitted"; a rejection landing
// between the admission's re-check and its commit left the job rejected
// with its candidate written). The admission
// runs inside the rejection's step (deterministic, no timing): it is
// refused SESSION_BUSY admission.in_progress, the checkout is
// byte-identical and the job is rejected.
func TestRejectHoldsOffAdmission(t *testing.T) {
	f := newFixture(t, baseFiles)
	id := f.job(edit{path: "a.go", content: "package a\n"})
	before := snapshot(t, f.ws)
	var admitErr error
	ran := false
	rej, err := New(t0, Options{Jobs: f.jobs, Env: f.adm.o.Env, StateDir: f.state, testOnlyStep: func(step int) {
		if step == stepRejectHeld {
			ran = true
			_, admitErr = f.admit(id)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rej.Reject(t0, id, f.ws, "u"); err != nil {
		t.Fatalf("reject: %v", err)
	}
	if fe := fault.From(admitErr); !ran || fe == nil || fe.Code != fault.SessionBusy || fe.Reason != ReasonInProgress {
		t.Errorf("admission during the rejection: %v (ran %v), want SESSION_BUSY %s", admitErr, ran, ReasonInProgress)
	}
	if d := cmp.Diff(before, snapshot(t, f.ws)); d != "" {
		t.Errorf("the checkout was written:\n%s", d)
	}
	if j, err := f.jobs.Get(t0, id); err != nil || j.State != job.Rejected {
		t.Errorf("job = %v %v, want rejected", j.State, err)
	}
	// The lock is released: a second rejection is refused by the job's
	// state, not as busy.
	if err := rej.Reject(t0, id, f.ws, "u"); fault.HasCode(err, fault.SessionBusy) {
		t.Errorf("second reject: %v, want the lock released", err)
	}
}
