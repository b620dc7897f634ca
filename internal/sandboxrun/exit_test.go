package sandboxrun

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/exitstatus"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// TestSandboxExitMapping covers the classes a test cannot easily provoke
// on every host (OOM, cancellation, an unconfirmed tree).
func TestSandboxExitMapping(t *testing.T) {
	limits := sandbox.Limits{Memory: 16 << 20, Output: 1 << 20, Wall: 2 * time.Second}
	tests := []struct {
		exit sandbox.Exit
		want error
	}{
		{sandbox.Exit{Class: sandbox.ExitExited, Code: 0}, nil},
		{sandbox.Exit{Class: sandbox.ExitExited, Code: 3}, exitstatus.Error{Code: 3, Msg: "sandboxed command exited with status 3"}},
		{sandbox.Exit{Class: sandbox.ExitSignalled, Code: -1, Signal: "SIGSYS"}, exitstatus.Error{Code: 128 + 31, Msg: "sandboxed command was killed by SIGSYS"}},
		{sandbox.Exit{Class: sandbox.ExitSignalled, Code: -1}, exitstatus.Error{Code: 137, Msg: "sandboxed command was killed by a signal"}},
		{sandbox.Exit{Class: sandbox.ExitTimedOut, Code: -1, Signal: "SIGKILL"}, exitstatus.Error{Code: 124, Msg: "sandboxed command timed out after 2s (--timeout)"}},
		{sandbox.Exit{Class: sandbox.ExitOutOfMemory, Code: -1, Signal: "SIGKILL"}, exitstatus.Error{Code: 137, Msg: "sandboxed command ran out of memory (16 MiB, --memory-mb) and was killed"}},
		{sandbox.Exit{Class: sandbox.ExitCancelled, Code: -1}, exitstatus.Error{Code: 130, Msg: "sandboxed command was cancelled"}},
	}
	for _, tt := range tests {
		got := exitFor(sandbox.Receipt{Requested: limits, Exit: tt.exit}, 0)
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(exitstatus.Error{})); diff != "" {
			t.Errorf("%+v: (-want +got)\n%s", tt.exit, diff)
		}
	}
	err := exitFor(sandbox.Receipt{Exit: sandbox.Exit{Class: sandbox.ExitUncertain, Code: -1}}, 0)
	if !fault.HasCode(err, fault.ProcessError) {
		t.Errorf("uncertain: %v; want PROCESS_ERROR", err)
	}
}

// TestCancelledBySignalExitsLikeTheShell: a run cancelled because
// coagent8 received signal N exits 128+N (143 for SIGTERM); without a
// signal it stays 130.
func TestCancelledBySignalExitsLikeTheShell(t *testing.T) {
	r := sandbox.Receipt{Exit: sandbox.Exit{Class: sandbox.ExitCancelled, Code: -1}}
	for _, tt := range []struct{ interrupted, want int }{{0, 130}, {143, 143}, {130, 130}} {
		var xe exitstatus.Error
		if err := exitFor(r, tt.interrupted); !errors.As(err, &xe) || xe.Code != tt.want {
			t.Errorf("interrupted %d: %v; want exit %d", tt.interrupted, err, tt.want)
		}
	}
}

// TestProbeTableAligned: the qualification table's name column is as
// wide as the longest probe name, so every verdict starts in one column.
func TestProbeTableAligned(t *testing.T) {
	var b strings.Builder
	writeProbes(&b, []sandbox.ProbeResult{
		{Name: "network", Contained: true, MS: 12},
		{Name: "agent_unix_sockets", Contained: true, MS: 3},
		{Name: "ia32", Contained: true, HostLacks: "int 0x80", MS: 1},
		{Name: "ptrace", MS: 250},
	})
	want := "" +
		"  network            contained          12 ms\n" +
		"  agent_unix_sockets contained           3 ms\n" +
		"  ia32               absent (host)       1 ms\n" +
		"  ptrace             NOT CONTAINED     250 ms\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("probe table (-want +got):\n%s", diff)
	}
}
