package operator

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/job"
)

// samplePath turns a route pattern into a concrete request.
func samplePath(pattern string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	path = strings.NewReplacer("{$}", "", "{id}", "c1", "{action}", "stop", "{file}", "app.css").Replace(path)
	return method, path
}

// TestOperatorEveryRouteBehindTheChain is R-093: every route of the table
// refuses a request without the credential, a wrong Host and a foreign
// unsafe request; there is no exception.
func TestOperatorEveryRouteBehindTheChain(t *testing.T) {
	ts := start(t, Options{})
	for _, rt := range routeTable {
		method, path := samplePath(rt.pattern)
		t.Run(rt.pattern, func(t *testing.T) {
			if got := ts.do(t, req{method: method, path: path}); got.status != http.StatusUnauthorized {
				t.Errorf("no credential: status %d", got.status)
			}
			if got := ts.do(t, req{method: method, path: path, auth: true, host: "rebind.example:" + portOf(ts)}); got.status != http.StatusMisdirectedRequest {
				t.Errorf("wrong Host: status %d", got.status)
			}
			if method == http.MethodPost {
				r := ts.post(path)
				r.header["Origin"] = "https://evil.example"
				if got := ts.do(t, r); got.status != http.StatusForbidden {
					t.Errorf("foreign Origin: status %d", got.status)
				}
			}
		})
	}
}

// TestOperatorNoHiddenRoutes: no job-queue admin, no former stop
// route, templates are not served.
func TestOperatorNoHiddenRoutes(t *testing.T) {
	ts := start(t, Options{})
	for _, r := range []req{{path: "/admin/queue"}, {path: "/admin"}, {path: "/assets/layout.html"}, {path: "/doc.go"}, {path: "/assets/doc.go"},
		{method: http.MethodPost, path: "/stop"}, {method: http.MethodPost, path: "/api/stop"}, {path: "/debug/pprof/"}} {
		r.auth = true
		if r.method == http.MethodPost {
			r = ts.post(r.path)
		}
		if got := ts.do(t, r); got.status != http.StatusNotFound && got.status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: status %d, want 404", r.method, r.path, got.status)
		}
	}
}

func TestOperatorLifecycleRefused(t *testing.T) {
	ts := start(t, Options{})
	for _, action := range lifecycleActions {
		got := ts.do(t, ts.post("/lifecycle/"+action))
		if got.status != http.StatusConflict || !strings.Contains(got.body, "LIFECYCLE_UNAVAILABLE") ||
			!strings.Contains(got.body, "lifecycle.unqualified") {
			t.Errorf("%s: status %d body %.300q", action, got.status, got.body)
		}
	}
	if !contains(ts.refusals(), "lifecycle.unqualified") {
		t.Errorf("no security event for the lifecycle refusal; have %v", ts.refusals())
	}
	page := ts.do(t, req{path: "/", auth: true})
	if !strings.Contains(page.body, "LIFECYCLE_UNAVAILABLE") {
		t.Error("the overview does not say lifecycle actions are unavailable")
	}
}

// TestOperatorAdmitPassesAcknowledgements: the acknowledged reasons reach
// the candidate source whether the token came in the form or the header.
func TestOperatorAdmitPassesAcknowledgements(t *testing.T) {
	cands := &fakeCandidates{c: Candidate{CandidateSummary: CandidateSummary{ID: "c1"}, Acknowledge: []string{"tainted"}}}
	ts := start(t, Options{Candidates: cands})
	r := req{method: http.MethodPost, path: "/candidates/c1/admit", auth: true, body: "ack=tainted",
		header: map[string]string{"Origin": ts.url, "X-CSRF-Token": ts.csrf}}
	if got := ts.do(t, r); got.status != http.StatusOK {
		t.Fatalf("status %d %.200q", got.status, got.body)
	}
	if len(cands.acks) != 1 || cands.acks[0] != "tainted" {
		t.Errorf("acks %v", cands.acks)
	}
	if got := ts.do(t, ts.post("/candidates/c1/admit")); got.status != http.StatusBadRequest || !strings.Contains(got.body, "candidate.admitted_twice") {
		t.Errorf("second admission: status %d %.300q", got.status, got.body)
	}
	if got := ts.do(t, ts.post("/candidates/c1/reject")); got.status != http.StatusOK || len(cands.rejected) != 1 {
		t.Errorf("reject: status %d, rejected %v", got.status, cands.rejected)
	}
}

// TestOperatorNoCandidateSource: until the delegate job exists, actions
// refuse with a typed error.
func TestOperatorNoCandidateSource(t *testing.T) {
	ts := start(t, Options{})
	for _, p := range []string{"/candidates/x/admit", "/candidates/x/reject"} {
		got := ts.do(t, ts.post(p))
		if got.status != http.StatusNotImplemented || !strings.Contains(got.body, "operator.candidates_unavailable") {
			t.Errorf("%s: status %d", p, got.status)
		}
	}
	if got := ts.do(t, req{path: "/candidates/x", auth: true}); got.status != http.StatusNotImplemented {
		t.Errorf("candidate page: status %d", got.status)
	}
}

// unknownJobs answers every Get as the real candidate source does for an
// id naming no job: INVALID_INPUT job.unknown wrapping the store's cause.
type unknownJobs struct{ *fakeCandidates }

func (unknownJobs) Get(_ context.Context, id string) (Candidate, error) {
	return Candidate{}, job.UnknownError(id)
}

// TestOperatorUnknownCandidate404: a candidate page for an id naming no
// job is 404 with the typed error shown, and logs no "page failed"
// warning (it was a 400 and a WARN line on every mistyped URL).
func TestOperatorUnknownCandidate404(t *testing.T) {
	var logged bytes.Buffer
	ts := start(t, Options{Candidates: unknownJobs{&fakeCandidates{}}, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	got := ts.do(t, req{path: "/candidates/job_nope", auth: true})
	if got.status != http.StatusNotFound || !strings.Contains(got.body, "job.unknown") {
		t.Errorf("unknown candidate: status %d body %.300q, want 404 naming job.unknown", got.status, got.body)
	}
	if strings.Contains(logged.String(), "page failed") {
		t.Errorf("unknown candidate logged a page failure: %s", logged.String())
	}
}
