package turn

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
)

// TestModelRequestedIsRedacted: the requested model id is caller input
// echoed in structuredContent; a credential pasted as the model must come
// back as a placeholder, like the error message that names it.
func TestModelRequestedIsRedacted(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("Q7x", 31) + "AA"
	ws := t.TempDir()
	tests := []struct {
		name string
		out  func(r *Runner) Outcome
	}{
		{"failure", func(r *Runner) Outcome {
			return r.Failure(Request{Backend: "claude", Model: key}, fault.New(fault.PolicyDenied, "governance.deny", "denied"))
		}},
		{"completed", func(r *Runner) Outcome {
			return r.Run(t.Context(), Request{Backend: "claude", Prompt: "q", Workspace: ws, Model: key, SessionMode: "none"})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newRunner(t, &countingBackend{res: adapter.Result{Text: "ok", Model: "m"}})
			o := tt.out(r)
			if strings.Contains(o.ModelRequested, "Q7xQ7x") || !strings.Contains(o.ModelRequested, "[REDACTED:") {
				t.Fatalf("ModelRequested = %q (status %s), want a placeholder", o.ModelRequested, o.Status)
			}
		})
	}
}
