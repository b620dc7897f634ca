package admission

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
)

var baseFiles = map[string]string{
	"a.go":     "package a\n\nfunc A() int {\n\treturn 1\n}\n" + strings.Repeat("// filler\n", 20) + "func Z() int {\n\treturn 26\n}\n",
	"old.txt":  "old\n",
	"keep.txt": "keep\n",
}

// TestAdmitAppliesExactlyThePatch: the work tree after admission has the
// candidate's tree exactly; job, digest, actor and event are recorded.
func TestAdmitAppliesExactlyThePatch(t *testing.T) {
	f := newFixture(t, baseFiles)
	c := f.candidate(edit{path: "a.go", content: "package a\n"}, edit{path: "new/dir/n.txt", content: "n\n"}, edit{path: "old.txt", del: true})
	id := f.job(edit{path: "a.go", content: "package a\n"}, edit{path: "new/dir/n.txt", content: "n\n"}, edit{path: "old.txt", del: true})
	res, err := f.admit(id)
	if err != nil {
		t.Fatal(err)
	}
	if got := worktreeTree(t, f.ws); got != c.Tree {
		t.Errorf("work tree is %s, want the candidate tree %s", got, c.Tree)
	}
	if d := cmp.Diff([]string{"old.txt", "a.go", "new/dir/n.txt"}, res.Paths); d != "" || res.ThreeWay {
		t.Errorf("paths (-want +got):\n%s three-way %v", d, res.ThreeWay)
	}
	j, _ := f.jobs.Get(context.Background(), id)
	if j.State != job.Admitted || j.AdmittedBy != "test" || j.AdmittedDigest != c.Digest {
		t.Errorf("job after admission: %v by %q digest %q", j.State, j.AdmittedBy, j.AdmittedDigest)
	}
	if ev := f.events.Events(); len(ev) != 1 || ev[0].Reason != "admission.admitted" || ev[0].IDs["digest"] != c.Digest {
		t.Errorf("events = %+v", ev)
	}
	assertClean(t, f)
	// The user's index is not touched: git status shows the edits unstaged.
	if st := gitRun(t, f.ws, "status", "--porcelain"); !strings.Contains(st, "M a.go") {
		t.Errorf("status = %q", st)
	}
}

// assertClean: no staging directory, pending marker or journal is left.
func assertClean(t *testing.T, f *fixture) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(f.ws, ".git", "coagent8-admit-*"))
	more, _ := filepath.Glob(filepath.Join(f.state, "admissions", "*"))
	if len(left)+len(more) != 0 {
		t.Errorf("left behind: %v %v", left, more)
	}
}

// TestAdmitThreeWay: the checkout moved since base without touching the
// candidate's lines → a three-way apply keeps both changes.
func TestAdmitThreeWay(t *testing.T) {
	f := newFixture(t, baseFiles)
	changed := strings.Replace(baseFiles["a.go"], "return 1", "return 100", 1)
	id := f.job(edit{path: "a.go", content: changed})
	user := strings.Replace(baseFiles["a.go"], "return 26", "return 2600", 1)
	writeFile(t, f.ws, "a.go", user)
	gitRun(t, f.ws, "commit", "-q", "-am", "user moved on")
	// and a second user change to the same file, uncommitted and far away
	res, err := f.admit(id)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(f.ws, "a.go"))
	if !strings.Contains(string(got), "return 100") || !strings.Contains(string(got), "return 2600") {
		t.Errorf("merged a.go lacks a change:\n%s", got)
	}
	_ = res
}

// TestAdmitThreeWayFallback: a context change git cannot apply directly
// still merges when the base blob is known.
func TestAdmitThreeWayFallback(t *testing.T) {
	lines := func(r map[int]string) string {
		var b strings.Builder
		for i := 1; i <= 12; i++ {
			if v, ok := r[i]; ok {
				b.WriteString(v + "\n")
			} else {
				fmt.Fprintf(&b, "%d\n", i)
			}
		}
		return b.String()
	}
	f := newFixture(t, map[string]string{"f.txt": lines(nil)})
	id := f.job(edit{path: "f.txt", content: lines(map[int]string{8: "EIGHT"})})
	writeFile(t, f.ws, "f.txt", lines(map[int]string{5: "five"})) // uncommitted, inside the hunk's context
	res, err := f.admit(id)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(f.ws, "f.txt"))
	if string(got) != lines(map[int]string{5: "five", 8: "EIGHT"}) || !res.ThreeWay {
		t.Errorf("three-way %v, f.txt =\n%s", res.ThreeWay, got)
	}
}

// TestAdmitConflict: the checkout changed the candidate's lines → a
// conflict report naming the path, and the checkout (with .git) is
// byte-identical.
func TestAdmitConflict(t *testing.T) {
	f := newFixture(t, baseFiles)
	id := f.job(edit{path: "a.go", content: strings.Replace(baseFiles["a.go"], "return 1", "return 100", 1)},
		edit{path: "other.txt", content: "o\n"})
	writeFile(t, f.ws, "a.go", strings.Replace(baseFiles["a.go"], "return 1", "return -1", 1))
	before := snapshot(t, f.ws)
	_, err := f.admit(id)
	fe := fault.From(err)
	if fe == nil || fe.Reason != ReasonConflict || !strings.Contains(fe.Details["paths"], `"a.go"`) {
		t.Fatalf("err = %v (%+v), want %s naming a.go", err, fe, ReasonConflict)
	}
	if d := cmp.Diff(before, snapshot(t, f.ws)); d != "" {
		t.Errorf("checkout changed by a refused admission (-before +after):\n%s", d)
	}
	if j, _ := f.jobs.Get(context.Background(), id); j.State != job.Succeeded {
		t.Errorf("state after conflict = %v, want succeeded (still admissible)", j.State)
	}
	assertClean(t, f)
}

// TestAdmitRefusals: each inadmissible job is a typed error and writes
// nothing.
func TestAdmitRefusals(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, baseFiles)
	e := edit{path: "a.go", content: "package a\n"}
	rejected := f.job(e)
	f.adm.Reject(ctx, rejected, f.ws, "test")
	running, _ := f.jobs.Create(ctx, job.Spec{Workspace: f.ws, Base: f.base})
	tainted := f.job(edit{path: ".github/workflows/x.yml", content: "k: ghp_" + strings.Repeat("Zx9", 12) + "\n"})
	expired, _ := f.jobs.Create(ctx, job.Spec{Workspace: f.ws, Base: f.base, TTL: 1})
	c := f.candidate(e)
	f.jobs.Attach(ctx, expired.ID, job.Candidate{Patch: c.Patch, Digest: c.Digest})
	other := newFixture(t, baseFiles)
	foreign := other.job(e)
	f2 := &fixture{t: t, ws: f.ws, jobs: other.jobs, adm: other.adm}
	before := snapshot(t, f.ws)
	for _, tc := range []struct {
		name   string
		fx     *fixture
		id     string
		code   fault.Code
		reason string
	}{
		{"rejected", f, rejected, fault.PolicyDenied, "admission.rejected"},
		{"running", f, running.ID, fault.PolicyDenied, "admission.running"},
		{"tainted without ack", f, tainted, fault.PolicyDenied, ReasonUnacknowledged},
		{"expired", f, expired.ID, fault.PolicyDenied, "admission.expired"},
		{"other workspace", f2, foreign, fault.PolicyDenied, ReasonOtherWorkspace},
		{"unknown", f, "job_nope", fault.InvalidInput, job.ReasonUnknown},
	} {
		_, err := tc.fx.admit(tc.id)
		fe := fault.From(err)
		if fe == nil || fe.Code != tc.code || fe.Reason != tc.reason {
			t.Errorf("%s: err = %v, want %s %s", tc.name, err, tc.code, tc.reason)
		}
	}
	if d := cmp.Diff(before, snapshot(t, f.ws)); d != "" {
		t.Errorf("a refusal wrote to the checkout:\n%s", d)
	}
	// With the taint acknowledged the tainted job is admitted; a second
	// admission is refused.
	if _, err := f.admit(tainted, AckTainted); err != nil {
		t.Fatalf("acknowledged taint: %v", err)
	}
	ev := f.events.Events()
	if last := ev[len(ev)-1]; last.Reason != "admission.admitted" || last.IDs["ack"] != AckTainted {
		t.Errorf("admission event of a tainted job = %+v, want the acknowledgement recorded", last)
	}
	if _, err := f.admit(tainted, AckTainted); fault.From(err).Reason != "admission.admitted" {
		t.Errorf("second admission: %v", err)
	}
}

// TestAdmitUnknownAck: an acknowledgement admission does not know is
// refused up front as INVALID_INPUT naming it and the accepted values,
// even beside a known one; `--ack taint` used to pass and the admission
// was refused later as unacknowledged.
func TestAdmitUnknownAck(t *testing.T) {
	f := newFixture(t, baseFiles)
	tainted := f.job(edit{path: ".github/workflows/x.yml", content: "k: ghp_" + strings.Repeat("Zx9", 12) + "\n"})
	before := snapshot(t, f.ws)
	for _, tt := range []struct {
		ack  []string
		want string
	}{
		{[]string{"taint"}, `unknown ack value "taint" (accepted: tainted)`},
		{[]string{AckTainted, "bogus"}, `unknown ack value "bogus" (accepted: tainted)`},
		{[]string{""}, `unknown ack value "" (accepted: tainted)`},
		{[]string{"x\x1b[2K"}, `unknown ack value "x\x1b[2K" (accepted: tainted)`},
	} {
		_, err := f.admit(tainted, tt.ack...)
		fe := fault.From(err)
		if got := []string{string(fe.Code), fe.Reason, fe.Message}; !cmp.Equal(got, []string{"INVALID_INPUT", ReasonUnknownAck, tt.want}) {
			t.Errorf("ack %q: got %q, want INVALID_INPUT %s %q", tt.ack, got, ReasonUnknownAck, tt.want)
		}
	}
	if d := cmp.Diff(before, snapshot(t, f.ws)); d != "" {
		t.Errorf("a refusal wrote to the checkout:\n%s", d)
	}
	if err := CheckAck([]string{AckTainted}); err != nil {
		t.Errorf("CheckAck(tainted) = %v", err)
	}
}

// revokeNone is a job.Revoker for a job with no grants.
type revokeNone struct{}

func (revokeNone) RevokeJob(context.Context, string) ([]string, error) { return nil, nil }

// TestAdmitNoCandidateBeforeTaint: a job that failed with no candidate and
// was then quarantined is refused as admission.no_candidate, with or
// without the taint acknowledged: there is nothing to admit, and asking
// for `--ack tainted` first sent the user after the wrong cause.
func TestAdmitNoCandidateBeforeTaint(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, baseFiles)
	j, err := f.jobs.Create(ctx, job.Spec{Workspace: f.ws, Base: f.base})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.jobs.Transition(ctx, j.ID, []job.State{job.Running}, job.Failed, "delegate.agent_failed"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.jobs.Quarantine(ctx, j.ID, job.Containment{Revoker: revokeNone{}, Trigger: "operator", Actor: "test", Events: event.Discard{}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ack  []string
	}{{"without ack", nil}, {"with ack", []string{AckTainted}}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.admit(j.ID, tc.ack...)
			fe := fault.From(err)
			got := []any{fe.Code, fe.Reason}
			if d := cmp.Diff([]any{fault.InvalidInput, ReasonNoCandidate}, got); d != "" {
				t.Errorf("admit (-want +got):\n%s\nerror: %v", d, err)
			}
		})
	}
}
