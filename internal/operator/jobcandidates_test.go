package operator

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/verify"
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
	err = src.Admit(ctx, id, c.Digest, nil)
	if fe := fault.From(err); err == nil || fe.Reason != "admission.taint_unacknowledged" || co.read(t, "q.txt") != "<absent>" {
		t.Errorf("admit without ack: %v, q.txt %q", err, co.read(t, "q.txt"))
	}
	if err := src.Admit(ctx, id, c.Digest, []string{"tainted"}); err != nil || co.read(t, "q.txt") != "q\n" {
		t.Errorf("admit with ack: %v, q.txt %q", err, co.read(t, "q.txt"))
	}
}

// TestJobCandidatesChecks: the candidate view carries the checks that ran
// on the candidate in the verify profile, with their real exit statuses
// (issue 17 scope 4, issue 16 scope 4); a job without checks has none.
func TestJobCandidatesChecks(t *testing.T) {
	ctx := context.Background()
	co := newCheckout(t, t.TempDir())
	plain := co.job(t, map[string]string{"p.txt": "p\n"})
	ws, base := co.dir, co.base
	j, err := co.jobs.Create(ctx, job.Spec{Workspace: ws, Base: base, Backend: "claude", Model: "claude-sonnet-5-5",
		Budget: job.Budget{MaxUSD: 1, MaxRequests: 10, MaxMinutes: 5}})
	if err != nil {
		t.Fatal(err)
	}
	v := &job.Verification{Checks: []verify.Check{
		{Command: []string{"/usr/bin/make", "test"}, Status: verify.Passed, Exit: "exited", ExitCode: 0},
		{Command: []string{"/usr/bin/go", "vet"}, Status: verify.Failed, Exit: "exited", ExitCode: 2},
		{Command: []string{"/usr/bin/slow"}, Status: verify.Failed, Exit: "timed_out", ExitCode: -1},
	}}
	cand, _ := co.jobs.Get(ctx, plain)
	if _, err := co.jobs.Attach(ctx, j.ID, job.Candidate{Patch: cand.Candidate.Patch, Digest: cand.Candidate.Digest, Message: []byte("done"), Verification: v}); err != nil {
		t.Fatal(err)
	}
	src := NewJobCandidates(co.jobs, co.adm)
	got, err := src.Get(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []Check{{"/usr/bin/make test", "passed", 0}, {"/usr/bin/go vet", "failed", 2}, {"/usr/bin/slow", "failed (timed_out)", -1}}
	if d := cmp.Diff(want, got.Checks); d != "" {
		t.Errorf("checks (-want +got):\n%s", d)
	}
	none, err := src.Get(ctx, plain)
	if err != nil || none.Checks != nil {
		t.Errorf("a job without checks: %v, checks %+v", err, none.Checks)
	}
}

// TestOperatorAdmitBindsTheShownCandidate: the admit form carries the
// digest of the candidate the page showed, and admission refuses any
// other: a job quarantined while it ran is listed tainted with no patch
// yet; its agent's patch can still be attached afterwards
// ([job.Store.Attach]). An operator who opened the page before that must
// not admit bytes they never saw by clicking Admit on it.
func TestOperatorAdmitBindsTheShownCandidate(t *testing.T) {
	for _, tc := range []struct {
		name         string
		attachBefore bool // the patch was attached before the page was shown
		status       int
		reason       string
		file         string
	}{
		{"patch attached after the page was shown", false, http.StatusForbidden, "admission.digest_changed", "<absent>"},
		{"the patch the page showed", true, http.StatusOK, "", "q\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			state := t.TempDir()
			co := newCheckout(t, state)
			j, err := co.jobs.Create(ctx, job.Spec{Workspace: co.dir, Base: co.base, Backend: "claude", Model: "claude-sonnet-5-5",
				Budget: job.Budget{MaxUSD: 1, MaxRequests: 10, MaxMinutes: 5}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := co.jobs.Quarantine(ctx, j.ID, job.Containment{Revoker: revokeNothing{}, Trigger: "compromise.unadmitted_route",
				Actor: "gate", Events: event.Discard{}}); err != nil {
				t.Fatal(err)
			}
			cand := co.candidate(t, map[string]string{"q.txt": "q\n"})
			attach := func() {
				if _, err := co.jobs.Attach(ctx, j.ID, cand); err != nil {
					t.Fatal(err)
				}
			}
			ts := start(t, Options{StateDir: state, Candidates: NewJobCandidates(co.jobs, co.adm)})
			if tc.attachBefore {
				attach()
			}
			shown := ts.do(t, req{path: "/candidates/" + j.ID, auth: true})
			form := formFields(t, shown.body, "/candidates/"+j.ID+"/admit")
			if !tc.attachBefore {
				attach()
			}
			form.Set("ack", "tainted")
			got := ts.do(t, req{method: http.MethodPost, path: "/candidates/" + j.ID + "/admit", auth: true, body: form.Encode(),
				header: map[string]string{"Origin": ts.url}})
			if got.status != tc.status || (tc.reason != "" && !strings.Contains(got.body, tc.reason)) {
				t.Errorf("admit: status %d, body %.400q; want %d %q", got.status, got.body, tc.status, tc.reason)
			}
			if got, want := co.read(t, "q.txt"), tc.file; got != want {
				t.Errorf("q.txt = %q, want %q", got, want)
			}
		})
	}
}

// formFields returns the hidden fields of the form posting to action in
// page, as the browser would submit them.
func formFields(t *testing.T, page, action string) url.Values {
	t.Helper()
	i := strings.Index(page, `action="`+action+`"`)
	if i < 0 {
		t.Fatalf("no form for %s in %.300q", action, page)
	}
	form := page[i:]
	form = form[:strings.Index(form, "</form>")]
	v := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(form, -1) {
		v.Add(m[1], html.UnescapeString(m[2]))
	}
	return v
}
