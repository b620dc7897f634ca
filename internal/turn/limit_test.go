package turn

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
)

// TestPromptLimitStatesTheLimit: an INPUT_LIMIT refusal names the prompt's
// size and the limit, in the message and as limitBytes (issue 19 item 15).
func TestPromptLimitStatesTheLimit(t *testing.T) {
	n := adapter.MaxPromptBytes + 7
	fe := fault.From(Prompt(strings.Repeat("x", n)))
	got := []string{string(fe.Code), fe.Reason, fe.Details["limitBytes"]}
	want := []string{"INPUT_LIMIT", "prompt.size", "4194304"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %q, want %q", got, want)
	}
	if !strings.Contains(fe.Message, "4194311 bytes") || !strings.Contains(fe.Message, "limit of 4194304 bytes (4 MiB)") {
		t.Errorf("message %q does not state the size and the limit", fe.Message)
	}
}
