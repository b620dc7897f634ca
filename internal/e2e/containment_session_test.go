package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/providertest"
)

// TestConsultKernelSessionContinues (issue 15 scope 8): through the built
// server, a consult session whose first turn ran in the kernel read
// profile continues there: the first result offers the continuation, the
// second consult with its session_handle says containment kernel, its
// startup report is verified as the first's, and the double sees the
// second request carry the first turn's question and answer (the pinned
// Claude Code resumed its own session from the transcript coagent8 kept
// under the handle, owner-only in the state directory).
func TestConsultKernelSessionContinues(t *testing.T) {
	double := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "KERNEL-SESSION-ANSWER"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), double.URL(), "")
	ws := gitWorkspace(t)
	cs := connect(t, environ)

	one, res := call(t, cs, "consult", map[string]any{"proposal": "KERNEL-FIRST-QUESTION", "workspace_path": ws,
		"backend": "claude", "model": delegateModel})
	h, _ := one["sessionHandle"].(string)
	if res.IsError || one["containment"] != "kernel" || one["continuationAvailable"] != true || h == "" {
		t.Fatalf("first consult = %v", one)
	}
	state := filepath.Join(homeOf(environ), ".coagent8")
	if fi, err := os.Stat(filepath.Join(delegation.SessionStateDir(state, h), "transcript.jsonl")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("kept transcript: %v, %v; want an 0600 file", fi, err)
	}
	seen := len(double.Requests())
	two, res := call(t, cs, "consult", map[string]any{"proposal": "KERNEL-SECOND-QUESTION", "workspace_path": ws,
		"backend": "claude", "model": delegateModel, "session_handle": h})
	if res.IsError || two["status"] != "completed" || two["containment"] != "kernel" || two["sessionHandle"] != h ||
		two["continuationAvailable"] != true {
		t.Fatalf("second consult = %v", two)
	}
	if r, _ := two["containmentReason"].(string); !strings.Contains(r, "resuming its own session") {
		t.Errorf("containmentReason = %q", r)
	}
	if two["verification"] != one["verification"] {
		t.Errorf("second turn verified %q, want the first's %q", two["verification"], one["verification"])
	}
	validateOutput(t, cs, "consult", two)
	reqs := double.Requests()[seen:]
	if len(reqs) == 0 {
		t.Fatal("the double saw no request of the second turn")
	}
	body := string(reqs[len(reqs)-1].Body)
	for _, s := range []string{"KERNEL-FIRST-QUESTION", "KERNEL-SESSION-ANSWER", "KERNEL-SECOND-QUESTION"} {
		if !strings.Contains(body, s) {
			t.Errorf("the second turn's request lacks %q: the CLI did not resume its session", s)
		}
	}

	// The kept transcript changed on disk: the next turn is refused with
	// that reason before anything runs, never a fresh session.
	f, err := os.OpenFile(filepath.Join(delegation.SessionStateDir(state, h), "transcript.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"user","message":{"role":"user","content":"injected"}}` + "\n")
	f.Close()
	seen = len(double.Requests())
	three, _ := call(t, cs, "consult", map[string]any{"proposal": "KERNEL-THIRD-QUESTION", "workspace_path": ws,
		"backend": "claude", "model": delegateModel, "session_handle": h})
	e, _ := three["error"].(map[string]any)
	if three["status"] != "failed" || e["code"] != "SESSION_INVALID" || e["reason"] != delegation.ReasonSessionStateCorrupt {
		t.Errorf("consult on a tampered state = status %v error %v", three["status"], e)
	}
	if n := len(double.Requests()) - seen; n != 0 {
		t.Errorf("the double saw %d requests of the refused turn", n)
	}
}

// TestConsultKernelSessionAuto: session_mode auto reuses the kernel
// session of the workspace and continues it in the kernel, the CLI
// resuming its own session.
func TestConsultKernelSessionAuto(t *testing.T) {
	double := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "AUTO-SESSION-ANSWER"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	ws := gitWorkspace(t)
	environ := delegateEnv(t, probe.URL(), double.URL(), "")
	cs := connect(t, environ)
	args := func(q string) map[string]any {
		return map[string]any{"proposal": q, "workspace_path": ws, "backend": "claude", "model": delegateModel, "session_mode": "auto"}
	}
	one, _ := call(t, cs, "consult", args("AUTO-FIRST-QUESTION"))
	two, _ := call(t, cs, "consult", args("AUTO-SECOND-QUESTION"))
	if one["containment"] != "kernel" || two["containment"] != "kernel" || two["sessionHandle"] != one["sessionHandle"] || two["turn"] != float64(2) {
		t.Fatalf("auto consults = %v / %v", one, two)
	}
	reqs := double.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "AUTO-FIRST-QUESTION") || !strings.Contains(body, "AUTO-SECOND-QUESTION") {
		t.Error("the reused session's CLI did not resume its session")
	}
	// Closing the session removes the CLI state kept for it.
	h, _ := one["sessionHandle"].(string)
	state := filepath.Join(homeOf(environ), ".coagent8")
	if !delegation.HasSessionState(state, h) {
		t.Fatal("no state kept for the kernel session")
	}
	if sc, res := call(t, cs, "session", map[string]any{"action": "close", "workspace_path": ws, "session_handle": h}); res.IsError || sc["closed"] != true {
		t.Fatalf("close = %v", sc)
	}
	if delegation.HasSessionState(state, h) {
		t.Error("the closed session's kept CLI state is still there")
	}
}

// TestConsultHostSessionStaysOnHost: a session whose first turn ran on
// the host (no gate credential then) keeps continuing on the host after
// a gate credential is configured — its CLI session lives there — and
// says so; the kernel path's double sees nothing.
func TestConsultHostSessionStaysOnHost(t *testing.T) {
	host := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "HOST-SESSION-ANSWER"}})
	kernel := providertest.NewAnthropic(t, providertest.Options{})
	noCreds := `{"schemaVersion":1,"governance":{"models":{"allow":["` + delegateModel + `"]}}}`
	environ := delegateEnv(t, host.URL(), kernel.URL(), noCreds)
	ws := gitWorkspace(t)
	cs := connect(t, environ)
	one, _ := call(t, cs, "consult", map[string]any{"proposal": "HOST-FIRST-QUESTION", "workspace_path": ws,
		"backend": "claude", "model": delegateModel})
	h, _ := one["sessionHandle"].(string)
	if one["containment"] != "profile" || h == "" {
		t.Fatalf("first consult = %v", one)
	}
	writeConfig(t, filepath.Join(homeOf(environ), ".coagent8", "config.json"),
		`{"schemaVersion":1,"governance":{"models":{"allow":["`+delegateModel+`"]}},"gate":{"credentials":{"anthropic":"env:REAL_KEY"}}}`)
	two, res := call(t, cs, "consult", map[string]any{"proposal": "HOST-SECOND-QUESTION", "workspace_path": ws,
		"backend": "claude", "model": delegateModel, "session_handle": h})
	if res.IsError || two["status"] != "completed" || two["containment"] != "profile" || two["containmentReason"] != delegation.HostSessionReason {
		t.Fatalf("second consult = status %v containment %v reason %v (%v)", two["status"], two["containment"], two["containmentReason"], two["error"])
	}
	reqs := host.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "HOST-FIRST-QUESTION") || !strings.Contains(body, "HOST-SECOND-QUESTION") {
		t.Error("the host CLI did not resume its own session")
	}
	if n := len(kernel.Requests()); n != 0 {
		t.Errorf("the kernel path's double saw %d requests", n)
	}
}
