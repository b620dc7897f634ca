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

// TestKilledByOtherIsNamed: a CLI that something other than coagent8 kills
// is reported as killed (PROCESS_ERROR claude.killed, naming the signal and
// the stage), never as a startup report that did not match (issue 14).
func TestKilledByOtherIsNamed(t *testing.T) {
	tests := []struct{ name, script, stage string }{
		{"before the startup report", "@hang", "before its startup report"},
		{"after the startup report", goodInit + "\n" + delta + "\n@hang", "after its startup report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.script)
			go killWhenHanging(t, f)
			_, err := f.backend.Run(context.Background(), adapter.Turn{Prompt: "q", Workspace: t.TempDir(), Deadline: 20 * time.Second})
			fe := fault.From(err)
			if fe == nil || fe.Code != fault.ProcessError || fe.Reason != "claude.killed" {
				t.Fatalf("err = %v, want PROCESS_ERROR claude.killed", err)
			}
			for _, want := range []string{"was killed by SIGKILL", tt.stage, "coagent8 did not end it"} {
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
