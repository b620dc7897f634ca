package turn

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/process"
)

// TestContainmentOutcome (issue 15 scope 8): a completed turn reports
// its containment (a backend that reports none ran on its profile) and
// the reason governance gave; a kernel turn whose launcher kept no copy
// of the CLI session offers no continuation and says so, one whose
// launcher kept it (a read-profile session) does; a launcher that chose
// the host once the session was known gives its own reason.
func TestContainmentOutcome(t *testing.T) {
	for _, tc := range []struct {
		name         string
		reported     string
		reason       string
		launcher     adapter.Launcher
		want         []any
		wantWarnings int
	}{
		{"backend reports none", "", "", nil, []any{"profile", "the CLI's verified read-only profile on the host", true}, 0},
		{"profile with reason", "profile", "no gate credential configured for anthropic", nil, []any{"profile", "no gate credential configured for anthropic", true}, 0},
		{"kernel", "kernel", "kernel sandbox", nil, []any{"kernel", "kernel sandbox", false}, 1},
		{"kernel, session not kept", "kernel", "kernel sandbox", keptLauncher{}, []any{"kernel", "kernel sandbox", false}, 1},
		{"kernel, session kept", "kernel", "kernel sandbox", keptLauncher{kept: true}, []any{"kernel", "kernel sandbox", true}, 0},
		{"launcher chose the host", "profile", "kernel sandbox", keptLauncher{reason: "its CLI session lives on the host"},
			[]any{"profile", "its CLI session lives on the host", true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &countingBackend{res: adapter.Result{Text: "a", Model: "m", SessionID: "0b1e4bd7-44b5-4ae4-a0a3-1f2b2d8e1c33", Containment: tc.reported}}
			r, _ := newRunner(t, b)
			o := r.Run(context.Background(), Request{Backend: "claude", Prompt: "q", Workspace: t.TempDir(), SessionMode: "new", ContainmentReason: tc.reason, Launcher: tc.launcher})
			got := []any{o.Containment, o.ContainmentReason, o.ContinuationAvailable}
			if diff := cmp.Diff(tc.want, got); diff != "" || len(o.Warnings) != tc.wantWarnings {
				t.Errorf("outcome (-want +got):\n%s\nwarnings %q", diff, o.Warnings)
			}
		})
	}
}

// keptLauncher stands in for the read profile's launcher after its run.
type keptLauncher struct {
	kept   bool
	reason string
}

func (keptLauncher) Launch(context.Context, process.Spec) (adapter.Proc, error) { panic("not started") }
func (keptLauncher) Containment() string                                        { return "kernel" }
func (l keptLauncher) SessionKept() bool                                        { return l.kept }
func (l keptLauncher) ContainmentReason() string                                { return l.reason }
