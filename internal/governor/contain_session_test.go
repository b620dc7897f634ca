package governor_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/turn"
)

// TestContinuedSessionContainment (issue 15 scope 8): a continued Claude
// Code session runs where its CLI session lives. One whose first turn
// ran on the host (no read-profile state under its handle) continues on
// the host and says so; one with read-profile state is never sent to the
// host: when the kernel read profile is unavailable now (here: no
// kernel runtime in this process) it is refused SANDBOX_UNAVAILABLE
// session.kernel_unavailable with the cause, and the backend never runs.
func TestContinuedSessionContainment(t *testing.T) {
	const creds = `{"governance":{"models":{"allow":["m-default"]}},"gate":{"credentials":{"anthropic":"env:REAL_KEY"}}}`
	for _, tc := range []struct {
		name   string
		kept   bool
		want   []string
		reason string
	}{
		{"first turn on the host", false, []string{"completed", "profile", delegation.HostSessionReason, ""}, ""},
		{"first turn in the read profile", true, []string{"failed", "", "", "SANDBOX_UNAVAILABLE"}, governor.ReasonKernelSessionUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			claude := &fakeBackend{name: "claude"}
			g := stateGovernor(t, creds, state, claude)
			ws := t.TempDir()
			first := g.Run(context.Background(), governor.Turn{Request: turn.Request{Backend: "claude", Prompt: "q1",
				Workspace: ws, SessionMode: "new"}, Consent: denyAll{}}).Outcome
			if first.SessionHandle == nil {
				t.Fatalf("first turn = %+v", first)
			}
			if tc.kept {
				os.MkdirAll(delegation.SessionStateDir(state, *first.SessionHandle), 0o700)
			}
			o := g.Run(context.Background(), governor.Turn{Request: turn.Request{Backend: "claude", Prompt: "q2",
				Workspace: ws, SessionHandle: *first.SessionHandle}, Consent: denyAll{}}).Outcome
			got := []string{string(o.Status), o.Containment, o.ContainmentReason, ""}
			if o.Error != nil {
				got[3] = o.Error.Code
				if o.Error.Reason != tc.reason {
					t.Errorf("reason %q, want %q (%s)", o.Error.Reason, tc.reason, o.Error.Message)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("second turn (-want +got):\n%s", diff)
			}
			if runs := len(claude.ran()); runs != 2-b2i(tc.kept) {
				t.Errorf("backend ran %d times", runs)
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// stateGovernor is a governor over backends whose state directory is
// state.
func stateGovernor(t *testing.T, cfg, state string, bs ...adapter.Backend) *governor.Governor {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := config.FromList([]string{"HOME=/home/u", "COAGENT8_DIR=" + state})
	runner, err := turn.New(turn.Options{Env: env, Backends: bs, Events: &event.Memory{}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := governor.New(governor.Options{Env: env, Runner: runner, ConfigPath: path, Events: &event.Memory{}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}
