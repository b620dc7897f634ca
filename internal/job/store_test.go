package job

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/store"
)

func openAt(t *testing.T, path string) (*Store, *store.DB) {
	t.Helper()
	db, err := store.Open(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), db)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return s, db
}

var spec = Spec{Workspace: "/ws", Base: "abc", Backend: "claude", Model: "claude-sonnet-5-5",
	Budget: Budget{MaxUSD: 2, MaxRequests: 50, MaxMinutes: 10}}

// TestStoreSurvivesRestart: jobs, candidates and states read back the same
// from the real SQLite file after the store is closed and reopened; a job
// whose supervisor died is failed on open, a live one stays running.
func TestStoreSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, db := openAt(t, path)
	ok, _ := s.Create(ctx, spec)
	c := Candidate{Patch: []byte("diff --git a/x b/x\n"), Digest: quarantine.Digest([]byte("diff --git a/x b/x\n")),
		Findings: []quarantine.Finding{{Rule: quarantine.RuleCI, Severity: quarantine.Warn, Path: ".github/workflows/a.yml", Message: "m"}},
		Message:  []byte("done")}
	if st, err := s.Attach(ctx, ok.ID, c); err != nil || st != Succeeded {
		t.Fatalf("Attach = %v, %v", st, err)
	}
	live, _ := s.Create(ctx, spec)
	dead := createDead(t, s)
	db.Close()

	s2, db2 := openAt(t, path)
	defer db2.Close()
	got := map[string]string{}
	jobs, err := s2.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		got[j.ID] = j.State.String() + "/" + j.Reason
	}
	want := map[string]string{ok.ID: "succeeded/", live.ID: "running/", dead: "failed/" + ReasonSupervisorGone}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("states after restart (-want +got):\n%s", d)
	}
	j, _ := s2.Get(ctx, ok.ID)
	if d := cmp.Diff(c, *j.Candidate); d != "" || j.Budget != spec.Budget || j.Model != spec.Model {
		t.Errorf("candidate after restart (-want +got):\n%s", d)
	}
}

// createDead creates a running job whose recorded supervisor was a process
// that has exited.
func createDead(t *testing.T, s *Store) string {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	time.Sleep(50 * time.Millisecond) // let /proc show it before it is reaped
	d := &Store{db: s.db, now: s.now, pid: pid}
	j, err := d.Create(context.Background(), spec)
	cmd.Wait()
	if err != nil {
		// The child was already gone: record it by hand with a bogus start.
		j, _ = s.Create(context.Background(), spec)
		s.db.Exec(`UPDATE jobs SET supervisor_pid=?, supervisor_start=1 WHERE id=?`, pid, j.ID)
	}
	return j.ID
}

// TestTransitions: every action on a job in the wrong state is a typed
// error naming the state; an unknown handle is job.unknown.
func TestTransitions(t *testing.T) {
	ctx := context.Background()
	s, db := openAt(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	j, _ := s.Create(ctx, spec)
	tainted, _ := s.Create(ctx, spec)
	st, _ := s.Attach(ctx, tainted.ID, Candidate{Patch: []byte("p"), Digest: "sha256:x",
		Findings: []quarantine.Finding{{Rule: quarantine.RuleCredential, Severity: quarantine.Block}}})
	if st != Tainted {
		t.Errorf("blocking finding: state %v, want tainted", st)
	}
	// A containment event taints in the same write that stores the
	// candidate: it is never succeeded (admissible without --ack) between.
	revoked, _ := s.Create(ctx, spec)
	if st, err := s.Attach(ctx, revoked.ID, Candidate{Patch: []byte("p"), Digest: "sha256:y", Taint: "gate.revoked"}); st != Tainted || err != nil {
		t.Errorf("gate taint: Attach = %v, %v, want tainted", st, err)
	}
	if r, _ := s.Get(ctx, revoked.ID); r.State != Tainted || r.Reason != "gate.revoked" {
		t.Errorf("gate taint stored as %v %q, want tainted gate.revoked", r.State, r.Reason)
	}
	for _, tc := range []struct {
		name   string
		do     func() error
		reason string
	}{
		{"reject running", func() error { return s.Reject(ctx, j.ID, "u") }, ReasonState},
		{"admit running", func() error { return s.MarkAdmitted(ctx, j.ID, "u", "d") }, ReasonState},
		{"unknown", func() error { return s.Reject(ctx, "job_nope", "u") }, ReasonUnknown},
		{"reject tainted", func() error { return s.Reject(ctx, tainted.ID, "u") }, ""},
		{"reject twice", func() error { return s.Reject(ctx, tainted.ID, "u") }, ReasonState},
		{"attach twice", func() error { _, err := s.Attach(ctx, tainted.ID, Candidate{}); return err }, ReasonState},
	} {
		err := tc.do()
		got := ""
		if fe := fault.From(err); fe != nil {
			got = fe.Reason
		}
		if got != tc.reason {
			t.Errorf("%s: reason %q (%v), want %q", tc.name, got, err, tc.reason)
		}
	}
	r, _ := s.Get(ctx, tainted.ID)
	if r.State != Rejected || r.Candidate == nil || r.Candidate.Patch != nil {
		t.Errorf("rejected job keeps its bytes: %+v", r.Candidate)
	}
}

func TestExpiry(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, db := openAt(t, path)
	sp := spec
	sp.TTL = time.Millisecond
	j, _ := s.Create(ctx, sp)
	s.Attach(ctx, j.ID, Candidate{Patch: []byte("p"), Digest: "sha256:x"})
	time.Sleep(5 * time.Millisecond)
	db.Close()
	s2, db2 := openAt(t, path)
	defer db2.Close()
	got, _ := s2.Get(ctx, j.ID)
	if got.State != Expired || got.Candidate.Patch != nil {
		t.Errorf("after expiry: %v, patch %q", got.State, got.Candidate.Patch)
	}
}

func TestStateString(t *testing.T) {
	for s := Running; s <= Admitted; s++ {
		p, err := ParseState(s.String())
		if err != nil || p != s {
			t.Errorf("ParseState(%q) = %v, %v", s, p, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("String of an unknown state did not panic")
		}
	}()
	_ = State(99).String()
}

// TestUnknownJobNamesTheID: the refusal of an unknown id names it, quoted
// and bounded (it is the caller's input), with the code and reason
// unchanged.
func TestUnknownJobNamesTheID(t *testing.T) {
	s, db := openAt(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	for _, tt := range []struct{ id, want string }{
		{"job_nope", "Unknown job handle \"job_nope\"; `coagent8 jobs` lists the jobs."},
		{"job\x1b[2K", "Unknown job handle \"job\\x1b[2K\"; `coagent8 jobs` lists the jobs."},
		{strings.Repeat("j", 100), `Unknown job handle "` + strings.Repeat("j", 64) + `"…; ` + "`coagent8 jobs` lists the jobs."},
	} {
		_, err := s.Get(context.Background(), tt.id)
		fe := fault.From(err)
		if fe.Code != fault.InvalidInput || fe.Reason != ReasonUnknown || fe.Message != tt.want {
			t.Errorf("Get(%q) = %s %s %q, want INVALID_INPUT %s %q", tt.id, fe.Code, fe.Reason, fe.Message, ReasonUnknown, tt.want)
		}
	}
}
