package exitstatus

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

func TestReport(t *testing.T) {
	for _, tt := range []struct {
		name     string
		err      error
		wantCode int
		wantOK   bool
		wantOut  string
	}{
		{"own status", Error{124, "timed out"}, 124, true, "coagent8: timed out\n"},
		{"own status, silent", Error{1, ""}, 1, true, ""},
		{"wrapped own status", fmt.Errorf("run: %w", Error{7, "x"}), 7, true, "coagent8: x\n"},
		{"refusal", fault.New(fault.SandboxUnavailable, "sandbox.cgroup", "no cgroup"), Refused, true,
			"coagent8: error [SANDBOX_UNAVAILABLE] no cgroup (reason: sandbox.cgroup)\n"},
		{"invalid input", fault.New(fault.InvalidInput, "sandbox.command", "bad path"), Usage, true,
			"coagent8: error [INVALID_INPUT] bad path (reason: sandbox.command)\n"},
		{"no backend chosen", fault.New(fault.OnboardingRequired, "backend.ambiguous", "pass --backend"), Usage, true,
			"coagent8: error [ONBOARDING_REQUIRED] pass --backend (reason: backend.ambiguous)\n"},
		{"failure", fault.New(fault.ProcessError, "x.y", "broke"), Failure, true,
			"coagent8: error [PROCESS_ERROR] broke (reason: x.y)\n"},
		{"other", errors.New("plain"), 0, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			code, ok := Report(&w, tt.err)
			if code != tt.wantCode || ok != tt.wantOK || w.String() != tt.wantOut {
				t.Errorf("Report = %d, %v, %q; want %d, %v, %q", code, ok, w.String(), tt.wantCode, tt.wantOK, tt.wantOut)
			}
		})
	}
}
