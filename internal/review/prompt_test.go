package review

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/gitscope"
)

func TestPrompt(t *testing.T) {
	s := gitscope.Snapshot{Description: "uncommitted changes", Commit: "abc123", Text: "diff --git a/x b/x\n+new"}
	got := Prompt(s, "", 3)
	for _, want := range []string{"[TASK: CODE REVIEW & AUDIT]\n", "INSTRUCTIONS:\n" + DefaultInstructions,
		"SCOPE: uncommitted changes", "REVIEW: 3\nSNAPSHOT: abc123\n", "END_REVIEW\n", "GIT SNAPSHOT:\ndiff --git a/x b/x\n+new"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "PARTIAL unless") {
		t.Error("complete snapshot announced as cut")
	}
	s.Incomplete, s.Commit = true, ""
	got = Prompt(s, "Focus on auth.", 1)
	for _, want := range []string{"INSTRUCTIONS:\nFocus on auth.", "PARTIAL unless", "SNAPSHOT: NO_COMMIT"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
}

// TestPromptExampleIsNotReady: the envelope template inside the prompt, if
// echoed back verbatim, never passes the gate.
func TestPromptExampleIsNotReady(t *testing.T) {
	got, _ := Gate(envelopeRequest("abc", 1), false)
	if got.Verdict != Blocked {
		t.Errorf("echoed template gated %s", got.Verdict)
	}
}
