//go:build linux && amd64

package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// TestJudgeForeignABI: the three outcomes of issue 14 (absent from the
// host, killed by the filter, ran), plus every disagreement that cannot
// tell, are told apart; only "killed" and "absent inside and outside"
// count as contained.
func TestJudgeForeignABI(t *testing.T) {
	sigsys := Receipt{Exit: Exit{Class: ExitSignalled, Code: -1, Signal: "SIGSYS"}}
	exited0 := Receipt{Exit: Exit{Class: ExitExited}}
	faulted := probeReport{Outcome: abiAbsent, Detail: "int 0x80 faulted before any system call"}
	ran := probeReport{Outcome: abiRan, Detail: "ia32 socket() returned 3"}
	ctlAbsent := abiControl{rep: faulted}
	ctlRan := abiControl{rep: ran}
	ctlBroken := abiControl{err: errors.New("control run outside the sandbox printed no report")}
	x32Absent := probeReport{Outcome: abiAbsent, Detail: "x32 getpid() returned ENOSYS"}
	tests := []struct {
		name      string
		r         Receipt
		in        probeReport
		reported  bool
		ctl       abiControl
		contained bool
		hostLacks bool
		detail    string
	}{
		{"faulted inside and outside", exited0, faulted, true, ctlAbsent, true, true, "this host has no ia32 system-call entry (int 0x80)"},
		{"killed by SIGSYS, host has it", sigsys, probeReport{}, false, ctlRan, true, false, "killed by the seccomp filter (SIGSYS)"},
		{"killed by SIGSYS, host lacks it", sigsys, probeReport{}, false, ctlAbsent, true, false, "SIGSYS"},
		{"ran inside", exited0, ran, true, ctlRan, false, false, "NOT CONTAINED: the call ran inside"},
		{"ran inside, control faulted", exited0, ran, true, ctlAbsent, false, false, "NOT CONTAINED"},
		{"faulted inside, ran outside", exited0, faulted, true, ctlRan, false, false, "cannot tell"},
		{"faulted inside, control broken", exited0, faulted, true, ctlBroken, false, false, "cannot tell"},
		{"crashed without a report", Receipt{Exit: Exit{Class: ExitExited, Code: 2}}, probeReport{}, false, ctlAbsent, false, false, "could not run: exited with status 2"},
		{"killed by another signal", Receipt{Exit: Exit{Class: ExitSignalled, Code: -1, Signal: "SIGSEGV"}}, probeReport{}, false, ctlAbsent, false, false, "killed by SIGSEGV"},
		{"unknown outcome", exited0, probeReport{Outcome: "maybe"}, true, ctlAbsent, false, false, "unknown outcome"},
		// The filter sees x32 numbers before the kernel could answer
		// ENOSYS: "absent" inside means the filter let it through.
		{"x32 reached the kernel inside", exited0, x32Absent, true, abiControl{rep: x32Absent}, false, false, "did not kill it"},
		{"x32 killed by SIGSYS", sigsys, probeReport{}, false, abiControl{rep: x32Absent}, true, false, "SIGSYS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			abi := "ia32"
			if strings.HasPrefix(tt.name, "x32") {
				abi = "x32"
			}
			v := judgeForeignABI(abi, tt.r, tt.in, tt.reported, tt.ctl)
			if got, want := v.contained, tt.contained; got != want {
				t.Errorf("contained = %v, want %v (%s)", got, want, v.detail)
			}
			if got, want := v.hostLacks != "", tt.hostLacks; got != want {
				t.Errorf("hostLacks = %q, want set %v", v.hostLacks, want)
			}
			if !strings.Contains(v.detail, tt.detail) || !strings.Contains(v.detail, "control outside seccomp") {
				t.Errorf("detail %q lacks %q or the control's result", v.detail, tt.detail)
			}
		})
	}
}

// TestForeignABIControlMatchesHost: the control run observes this host as
// it is (its outcome is the host's own, checked against a direct call in
// this process for x32, which cannot crash it), and reports its cause.
func TestForeignABIControlMatchesHost(t *testing.T) {
	for _, name := range []string{"ia32", "x32"} {
		c := controlRun(t.Context(), name)
		if c.err != nil {
			t.Fatalf("%s control: %v", name, c.err)
		}
		if c.rep.Outcome != abiRan && c.rep.Outcome != abiAbsent || c.rep.Detail == "" {
			t.Errorf("%s control report %+v", name, c.rep)
		}
		t.Logf("%s on this host: %s", name, c.describe())
	}
	if got, want := controlRun(t.Context(), "x32").rep.Outcome, probeX32().Outcome; got != want {
		t.Errorf("x32 control %q, in-process %q", got, want)
	}
}

// TestRecordRechecksWhatTheHostLacked: a record that passed because this
// host lacked a mechanism holds only while the control still finds it
// absent; a control that cannot say (here, a probe with no control) voids
// the record, so the run path qualifies again.
func TestRecordRechecksWhatTheHostLacked(t *testing.T) {
	ia32 := controlRun(t.Context(), "ia32")
	tests := []struct {
		name  string
		probe ProbeResult
		want  bool
	}{
		{"nothing absent", ProbeResult{Name: "ia32", Contained: true}, true},
		{"ia32 absent as recorded", ProbeResult{Name: "ia32", Contained: true, HostLacks: abiMechanisms["ia32"]}, ia32.rep.Outcome == abiAbsent},
		{"no control for the probe", ProbeResult{Name: "not-a-probe", Contained: true, HostLacks: "x"}, false},
	}
	for _, tt := range tests {
		q := &Qualification{Probes: []ProbeResult{tt.probe}}
		if got := q.hostStillLacks(t.Context()); got != tt.want {
			t.Errorf("%s: hostStillLacks = %v, want %v (ia32 control %s)", tt.name, got, tt.want, ia32.describe())
		}
	}
}
