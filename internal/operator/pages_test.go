package operator

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/store"
)

// TestOperatorPagesShowOwnersState: each page shows what the owning
// packages wrote.
func TestOperatorPagesShowOwnersState(t *testing.T) {
	dir := t.TempDir()
	o := newOwners(t, dir)
	g := o.grant("job-gate-1", "claude-sonnet-5")
	o.decision("allow", "egress.allowed")
	o.decision("deny", "egress.category")
	handle := o.session("/work/project-a")
	o.event(event.Event{Type: event.TypeDecision, Reason: "sandbox.admitted", Rule: "sandbox", IDs: map[string]string{"job_id": "job-sb-1"}})
	o.event(event.Event{Type: event.TypeExecution, Reason: "sandbox.run.exited", Rule: "sandbox",
		IDs: map[string]string{"job_id": "job-sb-1", "exit_code": "0"}, Detail: "tree_empty=true run_ms=12.0"})
	ts := start(t, Options{StateDir: dir})
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/jobs", []string{"job-gate-1", "job-sb-1", "exited", "tree_empty=true", "live"}},
		{"/grants", []string{g.ID, "job-gate-1", "claude-sonnet-5", "<progress"}},
		{"/egress", []string{"egress.category", "deny 1", "allow 1", "provider-request"}},
		{"/egress?effect=deny", []string{"egress.category", "Newest refusals"}},
		{"/sessions", []string{"/work/project-a", handle, "completed"}},
		{"/events?type=execution", []string{"sandbox.run.exited"}},
		{"/candidates", []string{"delegate"}},
	} {
		got := ts.do(t, req{path: tc.path, auth: true})
		if got.status != 200 {
			t.Errorf("%s: status %d", tc.path, got.status)
		}
		for _, w := range tc.want {
			if !strings.Contains(got.body, w) {
				t.Errorf("%s lacks %q", tc.path, w)
			}
		}
	}
	if got := ts.do(t, req{path: "/events?type=execution", auth: true}); strings.Contains(got.body, "sandbox.admitted") {
		t.Error("the type filter let another type through")
	}
}

// TestOperatorUntrustedContentInertAndRedacted: markup in reasons,
// details, identifiers and grant fields is escaped; a credential in them
// is redacted before it is escaped.
func TestOperatorUntrustedContentInertAndRedacted(t *testing.T) {
	dir := t.TempDir()
	o := newOwners(t, dir)
	evil := `<script>window.pwned=1</script><a href="javascript:alert(1)">x</a>`
	o.event(event.Event{Type: event.TypeRefusal, Reason: "x" + evil, Rule: "operator",
		IDs: map[string]string{"job_id": "j<script>1</script>", evil: "v"}, Detail: "clone https://bob:s3cretpass@git.example/r " + evil})
	o.decision("deny", evil+" https://bob:s3cretpass@git.example/r")
	// A line written without the sink's redaction: the dashboard redacts
	// on its own.
	raw := `{"type":"refusal","time":"2026-12-01T00:00:00Z","reason":"raw https://bob:s3cretpass@git.example/r","rule":"test"}` + "\n"
	f, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(raw)
	f.Close()
	ts := start(t, Options{StateDir: dir})
	for _, path := range []string{"/events", "/jobs", "/egress", "/"} {
		got := ts.do(t, req{path: path, auth: true})
		if strings.Contains(got.body, "<script>window") || strings.Contains(got.body, `href="javascript:`) ||
			strings.Contains(got.body, "<script>1") {
			t.Errorf("%s renders markup from the state", path)
		}
		if strings.Contains(got.body, "s3cretpass") {
			t.Errorf("%s shows a credential", path)
		}
		if path == "/events" && !strings.Contains(got.body, "raw https://") {
			t.Errorf("%s lacks the raw event", path)
		}
		if path == "/events" && !strings.Contains(got.body, html.EscapeString("<script>window.pwned=1</script>")) {
			t.Errorf("%s does not show the untrusted text as text", path)
		}
	}
}

// TestOperatorStateErrorRenderedReadably: a state database the dashboard
// cannot read as expected gives a typed error on the page (code, reason,
// message), never a stack trace or the internal cause.
func TestOperatorStateErrorRenderedReadably(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(t.Context(), filepath.Join(dir, "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().Exec(`CREATE TABLE gate_grants (id TEXT)`); err != nil { // not the gate's schema
		t.Fatal(err)
	}
	db.Close()
	ts := start(t, Options{StateDir: dir})
	got := ts.do(t, req{path: "/grants", auth: true})
	if got.status != 503 || !strings.Contains(got.body, "PROCESS_ERROR") || !strings.Contains(got.body, "operator.state_unavailable") {
		t.Fatalf("status %d body %.400q", got.status, got.body)
	}
	if strings.Contains(got.body, "no such column") || strings.Contains(got.body, dir) {
		t.Error("the internal cause reached the page")
	}
}

// TestOperatorStatesItsLimits is R-094: the page says what the local
// credential does not establish.
func TestOperatorStatesItsLimits(t *testing.T) {
	ts := start(t, Options{})
	got := ts.do(t, req{path: "/", auth: true})
	for _, w := range []string{"does not establish remote", "per-object isolation", "effect-time revocation", "hostile browser"} {
		if !strings.Contains(got.body, w) {
			t.Errorf("the page does not say %q", w)
		}
	}
}
