package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
)

// TestDelegateEffortNamesTheFlag: `delegate` takes --effort, as consult
// does, and --reasoning-effort as its old alias; either is refused
// INVALID_INPUT delegate.effort_unsupported by the name the user typed
// (it named the MCP argument, reasoning_effort), before anything opens.
func TestDelegateEffortNamesTheFlag(t *testing.T) {
	for _, flag := range []string{"--effort", "--reasoning-effort"} {
		t.Run(flag, func(t *testing.T) {
			env := config.FromList([]string{"HOME=" + t.TempDir(), "COAGENT8_DIR=" + t.TempDir()})
			code, out, errs := runCLI(t, env, "", "delegate", "--max-usd", "1", "--workspace", t.TempDir(), flag, "high", "task")
			want := "coagent8: error [INVALID_INPUT] " + flag + " is not applied to delegate jobs in this version " +
				"(the agent runs at the model's default effort): omit it (reason: delegate.effort_unsupported)"
			got := []any{code, out, strings.SplitN(errs, "\n", 2)[0]}
			if d := cmp.Diff([]any{ExitUsage, "", want}, got); d != "" {
				t.Errorf("delegate %s high (-want +got):\n%s", flag, d)
			}
		})
	}
}
