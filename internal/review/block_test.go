package review

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBlock(t *testing.T) {
	answer := "REVIEW: 1\nSNAPSHOT: abc1234\nCOVERAGE: COMPLETE\nVERDICT: READY\nCHECKS: typecheck=PASS; tests=PASS\nEND_REVIEW"
	ready, err := Gate(answer, false)
	if err != nil || ready.Verdict != Ready {
		t.Fatalf("Gate: %+v %v", ready, err)
	}
	got := Block(ready, "Verification checks failed")
	if d := cmp.Diff([]any{Blocked, "Verification checks failed"}, []any{got.Verdict, got.Reason}); d != "" {
		t.Errorf("Block (-want +got):\n%s", d)
	}
	if strings.Contains(got.Text, "VERDICT: READY") || !strings.Contains(got.Text, "VERDICT: BLOCKED") {
		t.Errorf("text keeps the model's verdict:\n%s", got.Text)
	}
	blocked, _ := Gate(strings.Replace(answer, "COMPLETE", "PARTIAL", 1), false)
	if again := Block(blocked, "Verification checks failed"); again.Reason != ReasonPartial {
		t.Errorf("Block replaced the contract's reason: %q", again.Reason)
	}
}
