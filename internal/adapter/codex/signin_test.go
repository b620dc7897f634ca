package codex

import (
	"context"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
)

// TestNotSignedInIsRefusedAtOnce: the real CLI on a fresh machine (no
// ~/.codex, no provider configured, no login) reports through account/read
// that it needs OpenAI sign-in; the turn is AUTH_REQUIRED within seconds
// instead of retrying the unreachable provider until the deadline.
func TestNotSignedInIsRefusedAtOnce(t *testing.T) {
	home := t.TempDir()
	b, err := New(config.FromList([]string{"HOME=" + home, "PATH=/usr/bin:/bin", "CODEX_PATH=" + clitest.Path(t, "codex")}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = b.Run(context.Background(), adapter.Turn{Prompt: "hi", Workspace: t.TempDir(), Deadline: 2 * time.Minute})
	if fe := fault.From(err); fe == nil || fe.Code != fault.AuthRequired || fe.Reason != "codex.not_signed_in" {
		t.Fatalf("err = %v, want AUTH_REQUIRED codex.not_signed_in", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("refusal took %v", d)
	}
}
