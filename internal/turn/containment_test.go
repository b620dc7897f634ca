package turn

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
)

// TestContainmentOutcome (issue 15 scope 8): a completed turn reports
// its containment (a backend that reports none ran on its profile) and
// the reason governance gave; a kernel turn's CLI session ended with the
// sandbox, so it offers no continuation and says so.
func TestContainmentOutcome(t *testing.T) {
	for _, tc := range []struct {
		name         string
		reported     string
		reason       string
		want         []any
		wantWarnings int
	}{
		{"backend reports none", "", "", []any{"profile", "the CLI's verified read-only profile on the host", true}, 0},
		{"profile with reason", "profile", "no gate credential configured for anthropic", []any{"profile", "no gate credential configured for anthropic", true}, 0},
		{"kernel", "kernel", "kernel sandbox", []any{"kernel", "kernel sandbox", false}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &countingBackend{res: adapter.Result{Text: "a", Model: "m", SessionID: "0b1e4bd7-44b5-4ae4-a0a3-1f2b2d8e1c33", Containment: tc.reported}}
			r, _ := newRunner(t, b)
			o := r.Run(context.Background(), Request{Backend: "claude", Prompt: "q", Workspace: t.TempDir(), SessionMode: "new", ContainmentReason: tc.reason})
			got := []any{o.Containment, o.ContainmentReason, o.ContinuationAvailable}
			if diff := cmp.Diff(tc.want, got); diff != "" || len(o.Warnings) != tc.wantWarnings {
				t.Errorf("outcome (-want +got):\n%s\nwarnings %q", diff, o.Warnings)
			}
		})
	}
}
