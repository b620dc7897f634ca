//go:build linux && amd64

package sandbox

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
)

// TestEventsRecorded: a refusal, the qualification result, the admission
// and the receipt summary are recorded, correlated by job id, and no event
// carries the command's arguments or output.
func TestEventsRecorded(t *testing.T) {
	mem := &event.Memory{}
	s, err := New(Config{StateDir: t.TempDir(), Events: mem})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(testCtx(t), Spec{Path: "/usr/bin/true"}); !fault.HasCode(err, fault.SandboxUnavailable) {
		t.Fatalf("unqualified run: %v", err)
	}
	if _, err := s.Qualify(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	canary := "ARG_CANARY_" + strings.Repeat("Q", 12)
	var out bytes.Buffer
	r, err := s.Run(testCtx(t), Spec{Path: "/usr/bin/echo", Args: []string{canary}, Stdout: &out})
	if err != nil || !strings.Contains(out.String(), canary) {
		t.Fatalf("run: %v, output %q", err, out.String())
	}
	var got [][2]string
	for _, e := range mem.Events() {
		got = append(got, [2]string{string(e.Type), e.Reason})
		if b, _ := json.Marshal(e); bytes.Contains(b, []byte(canary)) {
			t.Errorf("event carries the command's argument or output: %s", b)
		}
	}
	want := [][2]string{{"refusal", "sandbox.qualification"}, {"verification", "sandbox.qualified"},
		{"decision", "sandbox.admitted"}, {"execution", "sandbox.run.exited"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	ev := mem.Events()
	if ev[0].Code != "SANDBOX_UNAVAILABLE" || ev[2].IDs["job_id"] != r.JobID || ev[3].IDs["job_id"] != r.JobID ||
		ev[3].IDs["exit_class"] != "exited" || ev[3].IDs["policy_digest"] != r.PolicyDigest {
		t.Errorf("event fields do not match the receipt %s: %+v", r.JobID, ev)
	}
}

// TestSinkUnwritableRefuses covers R-197: with an event sink configured
// that the kernel refuses to write (/dev/full: ENOSPC), a run is refused
// with SANDBOX_UNAVAILABLE reason audit.sink_unwritable and the command
// never starts — whether qualification is already on record or not.
func TestSinkUnwritableRefuses(t *testing.T) {
	state := t.TempDir()
	ok, _ := New(Config{StateDir: state})
	if _, err := ok.Qualify(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	full, err := event.OpenFile("/dev/full", redact.NewDiagnostic(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { full.Close() })
	for name, dir := range map[string]string{"qualified": state, "auto-qualify": t.TempDir()} {
		s, err := New(Config{StateDir: dir, AutoQualify: true, Events: full})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		_, err = s.Run(testCtx(t), Spec{Path: "/usr/bin/echo", Args: []string{"RAN"}, Stdout: &out})
		fe := fault.From(err)
		if fe == nil || fe.Code != fault.SandboxUnavailable || fe.Reason != ReasonSinkUnwritable {
			t.Errorf("%s: err = %#v, want SANDBOX_UNAVAILABLE %s", name, err, ReasonSinkUnwritable)
		}
		if out.Len() != 0 {
			t.Errorf("%s: the command ran without its audit record: %q", name, out.String())
		}
	}
}
