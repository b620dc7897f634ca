package operator

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/redact"
)

// TestTailKeepsEventsIntact: the compact form the tail keeps (interned
// fields, id pairs, one string per batch; issue 17 idle RSS) hands every
// event back as it was logged, over several refreshes.
func TestTailKeepsEventsIntact(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	sink, err := event.OpenFile(path, redact.NewDiagnostic(""))
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	at := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	want := []event.Event{
		{Type: event.TypeDecision, Time: at, Reason: "sandbox.admitted", Rule: "sandbox", IDs: map[string]string{"job_id": "job-1"}},
		{Type: event.TypeExecution, Time: at, Reason: "sandbox.run.exited", Rule: "sandbox",
			IDs: map[string]string{"job_id": "job-1", "exit_code": "0"}, Detail: "tree_empty=true run_ms=12.0"},
		{Type: event.TypeRefusal, Time: at, Code: "POLICY_DENIED", Reason: "egress.credential", Backend: "claude", Model: "m"},
	}
	tail := &eventTail{path: path}
	var got []event.Event
	for _, e := range want {
		if err := sink.Record(e); err != nil {
			t.Fatal(err)
		}
		if !tail.refresh() {
			t.Fatal("refresh saw nothing new")
		}
	}
	tail.each(func(e *event.Event) {
		c := *e
		c.IDs = maps.Clone(e.IDs) // each reuses the map
		got = append(got, c)
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kept events (-want +got):\n%s", diff)
	}
	// A handed-out event is the caller's: changing it changes no other.
	newest, _ := tail.newest(1, func(e *event.Event) bool { return e.IDs["job_id"] != "" })
	newest[0].IDs["job_id"] = "changed"
	again, _ := tail.newest(3, func(e *event.Event) bool { return e.IDs["job_id"] == "job-1" })
	if len(again) != 2 || again[0].IDs["job_id"] != "job-1" {
		t.Errorf("after changing a copy: %+v", again)
	}
}

// TestInternerIsBounded: past internMax distinct strings the interner
// stops growing and returns the string itself.
func TestInternerIsBounded(t *testing.T) {
	var m interner
	for i := range internMax + 10 {
		s := strings.Repeat("x", i+1)
		if got := m.get(s); got != s {
			t.Fatalf("get(%d x) = %q", i+1, got)
		}
	}
	if got, want := len(m), internMax; got != want {
		t.Errorf("interned %d strings, want %d", got, want)
	}
}
