package job

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/quarantine"
)

// events records security events.
type events struct{ got []event.Event }

func (e *events) Record(ev event.Event) error {
	e.got = append(e.got, ev)
	return nil
}

// revoker is a fake gate: it records the jobs it revoked.
type revoker struct {
	jobs []string
	err  error
}

func (r *revoker) RevokeJob(_ context.Context, job string) ([]string, error) {
	r.jobs = append(r.jobs, job)
	return []string{"grant-" + job}, r.err
}

// TestQuarantine: a succeeded job is revoked first, then tainted with the
// evidence; a running one has its tree ended through End; a failed
// revocation leaves the job as it was; an admitted job is refused after
// its grants are revoked.
func TestQuarantine(t *testing.T) {
	ctx := context.Background()
	s, db := openAt(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	done, _ := s.Create(ctx, spec)
	s.Attach(ctx, done.ID, Candidate{Patch: []byte("p"), Digest: "sha256:x"})
	running, _ := s.Create(ctx, spec)
	kept, _ := s.Create(ctx, spec)
	admitted, _ := s.Create(ctx, spec)
	s.Attach(ctx, admitted.ID, Candidate{Patch: []byte("p"), Digest: "sha256:x"})
	s.MarkAdmitted(ctx, admitted.ID, "u", "sha256:x")

	ended := 0
	end := func(context.Context, Job) error { ended++; return nil }
	for _, tc := range []struct {
		name, id  string
		rev       *revoker
		state     State
		reason    string // of the error
		treeEnded bool
		event     string // the one security event: type/reason
	}{
		{"succeeded", done.ID, &revoker{}, Tainted, "", false, "compromise/quarantine.compromise"},
		{"running", running.ID, &revoker{}, Tainted, "", true, "compromise/quarantine.compromise"},
		{"revoke fails", kept.ID, &revoker{err: errors.New("db locked")}, Running, ReasonRevoke, false, "refusal/quarantine.failed"},
		{"admitted", admitted.ID, &revoker{}, Admitted, ReasonState, false, "refusal/quarantine.failed"},
		{"unknown", "job_nope", &revoker{}, 0, ReasonUnknown, false, "refusal/quarantine.failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &events{}
			ev, err := s.Quarantine(ctx, tc.id, Containment{Revoker: tc.rev, End: end, Trigger: "operator", Actor: "terminal:uid=1", Events: rec})
			var got []string
			for _, e := range rec.got {
				got = append(got, string(e.Type)+"/"+e.Reason)
			}
			if d := cmp.Diff([]string{tc.event}, got); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
			if got := fault.From(err); (err == nil) != (tc.reason == "") || err != nil && got.Reason != tc.reason {
				t.Fatalf("Quarantine error %v, want reason %q", err, tc.reason)
			}
			if tc.state == 0 {
				return
			}
			if d := cmp.Diff([]string{tc.id}, tc.rev.jobs); d != "" {
				t.Errorf("revoked (-want +got):\n%s", d)
			}
			j, _ := s.Get(ctx, tc.id)
			if j.State != tc.state || ev.TreeEnded != tc.treeEnded {
				t.Errorf("state %v tree ended %v, want %v %v", j.State, ev.TreeEnded, tc.state, tc.treeEnded)
			}
			stored, ok, _ := s.QuarantineEvidence(ctx, tc.id)
			if tc.state != Tainted {
				if ok {
					t.Errorf("evidence stored for a job not tainted: %+v", stored)
				}
				return
			}
			want := Evidence{Trigger: "operator", Actor: "terminal:uid=1", At: ev.At, PriorState: ev.PriorState,
				RevokedGrants: []string{"grant-" + tc.id}, TreeEnded: tc.treeEnded, SupervisorAlive: true}
			if d := cmp.Diff(want, stored); d != "" || j.Reason != ReasonQuarantined {
				t.Errorf("evidence (-want +got):\n%s\nreason %q", d, j.Reason)
			}
		})
	}
	if ended != 1 {
		t.Errorf("End ran %d times, want 1 (running job only)", ended)
	}
}

// TestQuarantinedWhileRunningKeepsCandidate: a job quarantined while it
// runs (a containment event, or the terminal) still gets its candidate
// stored when the run ends, and stays tainted with its reason and
// evidence; a job failed meanwhile does not take one.
func TestQuarantinedWhileRunningKeepsCandidate(t *testing.T) {
	ctx := context.Background()
	s, db := openAt(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	j, _ := s.Create(ctx, spec)
	if _, err := s.Quarantine(ctx, j.ID, Containment{Revoker: &revoker{}, Trigger: "gate.revoked", Actor: "coagent8", Events: &events{}}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Attach(ctx, j.ID, Candidate{Patch: []byte("p"), Digest: quarantine.Digest([]byte("p"))})
	if err != nil || st != Tainted {
		t.Fatalf("Attach after quarantine = %v, %v; want tainted", st, err)
	}
	got, _ := s.Get(ctx, j.ID)
	if got.Reason != ReasonQuarantined || got.Candidate == nil || string(got.Candidate.Patch) != "p" {
		t.Errorf("job %v/%s candidate %+v, want tainted quarantine.compromise with the patch", got.State, got.Reason, got.Candidate)
	}
	if _, err := s.Attach(ctx, j.ID, Candidate{Patch: []byte("q"), Digest: "sha256:q"}); fault.From(err).Reason != ReasonState {
		t.Errorf("second Attach: %v, want job.state", err)
	}
	failed, _ := s.Create(ctx, spec)
	_ = s.Transition(ctx, failed.ID, []State{Running}, Failed, "x")
	if _, err := s.Attach(ctx, failed.ID, Candidate{Patch: []byte("p"), Digest: "sha256:p"}); fault.From(err).Reason != ReasonState {
		t.Errorf("Attach to a failed job: %v, want job.state", err)
	}
}
