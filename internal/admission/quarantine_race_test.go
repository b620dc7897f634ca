package admission

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
)

// revokes records the jobs whose grants were revoked.
type revokes struct {
	mu   sync.Mutex
	jobs []string
	err  error
}

func (r *revokes) RevokeJob(_ context.Context, id string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = append(r.jobs, id)
	return []string{"g1"}, r.err
}

func (r *revokes) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.jobs) }

// TestQuarantineWaitsForAdmission: a quarantine arriving after an
// admission checked the job for the last time, before its commit point.
// Before, the quarantine tainted the job there; the admission then wrote
// the candidate into the checkout and marked the tainted job admitted,
// erasing the compromise response. Now the quarantine waits for the
// admission's pending lock (the hook lets the admission go on only once
// the quarantine found the lock held: deterministic), and then finds the
// job admitted: its grants revoked, INVALID_INPUT job.state, recorded.
func TestQuarantineWaitsForAdmission(t *testing.T) {
	f := newFixture(t, baseFiles)
	id := f.job(edit{path: "a.go", content: "package a\n"})
	rv := &revokes{}
	events := &event.Memory{}
	busy := make(chan struct{})
	quarantined := make(chan error, 1)
	var adm *Admitter
	var once sync.Once
	var err error
	adm, err = New(t0, Options{Jobs: f.jobs, Env: f.adm.o.Env, StateDir: f.state, testOnlyStep: func(step int) {
		switch step {
		case stepChecked:
			go func() {
				_, err := adm.Quarantine(t0, id, job.Containment{Revoker: rv, Trigger: "operator", Actor: "u", Events: events})
				quarantined <- err
			}()
			<-busy
		case stepQuarantineBusy:
			once.Do(func() { close(busy) })
		case stepQuarantineHeld:
			if j, _ := f.jobs.Get(t0, id); j.State != job.Admitted {
				t.Errorf("quarantine holds the lock with the job %v, want admitted", j.State)
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.Admit(t0, Request{Job: id, Workspace: f.ws, Actor: "test"}); err != nil {
		t.Fatalf("admit: %v", err)
	}
	qerr := <-quarantined
	if fe := fault.From(qerr); fe == nil || fe.Code != fault.InvalidInput || fe.Reason != job.ReasonState {
		t.Errorf("quarantine after the admission: %v, want INVALID_INPUT %s", qerr, job.ReasonState)
	}
	if j, err := f.jobs.Get(t0, id); err != nil || j.State != job.Admitted {
		t.Errorf("job = %v %v, want admitted", j.State, err)
	}
	if got, want := rv.count(), 1; got != want {
		t.Errorf("revocations %d, want %d", got, want)
	}
	if !hasEvent(events, event.TypeRefusal, job.ReasonQuarantineFailed) {
		t.Errorf("no quarantine.failed refusal recorded: %+v", events.Events())
	}
}

// TestQuarantineBusyStillRevokes: an admission that keeps the lock past
// the wait leaves the job untainted, but its grants are revoked and the
// refusal says so (SESSION_BUSY admission.in_progress, retryable).
func TestQuarantineBusyStillRevokes(t *testing.T) {
	f := newFixture(t, baseFiles)
	id := f.job(edit{path: "a.go", content: "package a\n"})
	release, err := f.adm.holdPending(id) // an admission in progress
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	rv := &revokes{}
	events := &event.Memory{}
	quarantine := func(c job.Containment) error {
		ctx, cancel := context.WithCancel(t0)
		defer cancel()
		f.adm.o.testOnlyStep = func(step int) {
			if step == stepQuarantineBusy {
				cancel() // end the wait at once
			}
		}
		_, err := f.adm.Quarantine(ctx, id, c)
		return err
	}
	qerr := quarantine(job.Containment{Revoker: rv, Trigger: "operator", Actor: "u", Events: events})
	fe := fault.From(qerr)
	if fe == nil || fe.Code != fault.SessionBusy || fe.Reason != ReasonInProgress || !fe.Retryable {
		t.Fatalf("quarantine: %v, want retryable SESSION_BUSY %s", qerr, ReasonInProgress)
	}
	if got, want := rv.count(), 1; got != want {
		t.Errorf("revocations %d, want %d", got, want)
	}
	if j, _ := f.jobs.Get(t0, id); j.State != job.Succeeded {
		t.Errorf("job %v, want succeeded (untouched)", j.State)
	}
	if !hasEvent(events, event.TypeRefusal, job.ReasonQuarantineFailed) {
		t.Errorf("no quarantine.failed refusal recorded: %+v", events.Events())
	}
	rv.err = errors.New("gate down")
	qerr = quarantine(job.Containment{Revoker: rv, Events: events})
	if fe := fault.From(qerr); fe == nil || fe.Code != fault.SessionBusy || !strings.Contains(fe.Message, "could not be revoked") {
		t.Errorf("quarantine with the revocation failing: %v, want SESSION_BUSY", qerr)
	}
}

// TestQuarantineUnknownJob: an unknown id is refused by the job store and
// names no lock file (the id is not a path).
func TestQuarantineUnknownJob(t *testing.T) {
	f := newFixture(t, baseFiles)
	events := &event.Memory{}
	_, err := f.adm.Quarantine(t0, "../../escape", job.Containment{Revoker: &revokes{}, Events: events})
	if fe := fault.From(err); fe == nil || fe.Code != fault.InvalidInput {
		t.Fatalf("unknown job: %v, want INVALID_INPUT", err)
	}
}

func hasEvent(m *event.Memory, typ event.Type, reason string) bool {
	for _, e := range m.Events() {
		if e.Type == typ && e.Reason == reason {
			return true
		}
	}
	return false
}
