package turn

import (
	"context"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/redact/redacttest"
)

func TestAnswerBoundKeepsRoomForRedaction(t *testing.T) {
	if adapter.MaxAnswerBytes < MaxOutputBytes+redact.MaxHold {
		t.Fatalf("adapter.MaxAnswerBytes = %d, want at least the bound plus redact.MaxHold (%d)",
			adapter.MaxAnswerBytes, MaxOutputBytes+redact.MaxHold)
	}
}

// Issue 19 item 6: an answer the backend cut as it read it may end inside
// a credential; no piece of it may reach the output, and the outcome says
// it was truncated.
func TestTruncatedAnswerNeverLeaksACutSecret(t *testing.T) {
	ws := t.TempDir()
	for _, c := range redacttest.Canaries() {
		for k := 1; k < len(c.Text); k++ {
			text := "Here is the key: " + c.Text[:k]
			b := &countingBackend{res: adapter.Result{Text: text, Truncated: true, Model: "m"}}
			r, _ := newRunner(t, b)
			o := r.Run(context.Background(), Request{Backend: "claude", Prompt: "q", Workspace: ws})
			if o.Status != Completed || !o.Truncated || !strings.HasPrefix(o.Output, "Here is the key:") {
				t.Fatalf("%s cut at %d: outcome %v truncated=%v output %q", c.Name, k, o.Status, o.Truncated, o.Output)
			}
			if leaks := redacttest.Leaks([]byte(o.Output), []redacttest.Canary{c}); len(leaks) > 0 {
				t.Fatalf("%s cut at %d: %v in %q", c.Name, k, leaks, o.Output)
			}
		}
	}
}

// A secret straddling the public bound is redacted before the cut, and an
// answer under the bound is returned whole.
func TestAnswerBound(t *testing.T) {
	ws := t.TempDir()
	c := redacttest.Canaries()[0]
	long := strings.Repeat("a ", (MaxOutputBytes-10)/2) + c.Text + " tail"
	tests := []struct {
		name      string
		res       adapter.Result
		want      string
		truncated bool
	}{
		{"short", adapter.Result{Text: "answer " + c.Text}, "answer " + c.Want, false},
		{"straddling the bound", adapter.Result{Text: long}, (strings.Repeat("a ", (MaxOutputBytes-10)/2) + c.Want)[:MaxOutputBytes], true},
		{"straddling, cut at the source", adapter.Result{Text: long, Truncated: true},
			(strings.Repeat("a ", (MaxOutputBytes-10)/2) + c.Want)[:MaxOutputBytes], true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.res.Model = "m"
			r, _ := newRunner(t, &countingBackend{res: tt.res})
			o := r.Run(context.Background(), Request{Backend: "claude", Prompt: "q", Workspace: ws})
			if o.Output != tt.want || o.Truncated != tt.truncated {
				t.Errorf("output %d bytes (truncated %v), want %d bytes (truncated %v)", len(o.Output), o.Truncated, len(tt.want), tt.truncated)
			}
		})
	}
}
