package mcpserver

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/turn"
)

// TestTextAgreesWithStatus (issue 19 item 8): the text of a running
// background turn says it is running, never "finished" with an empty
// answer; finished turns keep their state words.
func TestTextAgreesWithStatus(t *testing.T) {
	h := "c8_h"
	tests := []struct {
		name    string
		o       turn.Outcome
		want    []string
		notWant []string
	}{
		{"running", turn.Outcome{Status: turn.Running, SessionHandle: &h, Turn: 1},
			[]string{"running in the background", "(turn 1 · running)"}, []string{"finished", "ready"}},
		{"completed, continuable", turn.Outcome{Status: turn.Completed, Output: "answer", SessionHandle: &h, Turn: 2, ContinuationAvailable: true},
			[]string{"answer\n", "(turn 2 · ready)"}, []string{"running"}},
		{"completed, not continuable", turn.Outcome{Status: turn.Completed, Output: "answer", SessionHandle: &h, Turn: 1},
			[]string{"(turn 1 · finished)"}, []string{"running"}},
		{"failed", turn.Outcome{Status: turn.Failed, Error: &turn.Error{Code: "X", Message: "m", Reason: "r"}, SessionHandle: &h, Turn: 1},
			[]string{"> Error [X]: m (reason: r)", "(turn 1 · finished)"}, []string{"running"}},
	}
	for _, tt := range tests {
		got := Text(tt.o)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: Text lacks %q:\n%s", tt.name, w, got)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(got, w) {
				t.Errorf("%s: Text has %q:\n%s", tt.name, w, got)
			}
		}
	}
}

// TestProductName: the tool result's footer and the server's title name
// the product coagent8 (they said "CoAgent").
func TestProductName(t *testing.T) {
	p := "claude"
	text := Text(turn.Outcome{Status: turn.Completed, Output: "answer", Provider: &p, Model: "m"})
	got := []string{identity().Title, text[strings.LastIndex(text, "\n> ")+1:]}
	want := []string{"coagent8", "> coagent8: claude (m) · 0.0s · 0 ops"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("got %q, want %q", got[i], want[i])
		}
	}
	if strings.Contains(text, "CoAgent") {
		t.Errorf("Text says CoAgent:\n%s", text)
	}
}
