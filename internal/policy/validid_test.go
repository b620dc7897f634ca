package policy_test

// An external test package: adapter imports process, which imports config,
// which imports policy, so an internal test of policy cannot import adapter.

import (
	"testing"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/policy"
)

// TestValidIDAgreesWithAdapter keeps the duplicated pattern in step with
// adapter.ValidModel, which guards argv.
func TestValidIDAgreesWithAdapter(t *testing.T) {
	for _, id := range []string{"gpt-5", "anthropic/claude-sonnet-4.5", "x:high", "m[1m]", "--yolo", "-m", "a b",
		"a\x00", "a;b", "a|b", "$(x)", "`x`", "a&b", "a>b", "", "é", string(make([]byte, 129))} {
		if got, want := policy.ValidID(id), adapter.ValidModel(id) == nil; got != want {
			t.Errorf("ValidID(%q) = %v, adapter.ValidModel says %v", id, got, want)
		}
	}
}
