//go:build unix

package claude

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
)

// TestKilledByOtherIsNamed: a CLI that something else kills is reported
// as killed, naming the signal (issue 14), never as a startup report that
// did not match. Before its report it stays a refusal (SANDBOX_UNAVAILABLE:
// the profile was never verified); after it, a PROCESS_ERROR.
func TestKilledByOtherIsNamed(t *testing.T) {
	tests := []struct {
		name, script string
		code         fault.Code
		stage        string
	}{
		{"before the startup report", "@hang", fault.SandboxUnavailable, "before its startup report, so its read-only profile could not be verified"},
		{"after the startup report", goodInit + "\n" + delta + "\n@hang", fault.ProcessError, "after its startup report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.script)
			go killWhenHanging(t, f)
			_, err := f.backend.Run(context.Background(), adapter.Turn{Prompt: "q", Workspace: t.TempDir(), Deadline: 20 * time.Second})
			fe := fault.From(err)
			if fe == nil || fe.Code != tt.code || fe.Reason != "claude.killed" {
				t.Fatalf("err = %v, want %s claude.killed", err, tt.code)
			}
			for _, want := range []string{"was killed by SIGKILL", tt.stage} {
				if !strings.Contains(fe.Message, want) {
					t.Errorf("message %q lacks %q", fe.Message, want)
				}
			}
		})
	}
}

// killWhenHanging SIGKILLs the fake by its host pid once it hangs (the pid
// file exists before its content is written: wait for a whole number).
func killWhenHanging(t *testing.T, f *fake) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(filepath.Join(f.dir, "pid"))
		if pid, err := strconv.Atoi(string(b)); err == nil && pid > 1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Error("the fake never wrote its pid")
}
