//go:build linux && amd64

package sandbox

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestPlanRegistersInRange: the child indexes its register file modulo its
// size rather than panic, so a plan must never name a register out of
// range, and every op must carry a step name.
func TestPlanRegistersInRange(t *testing.T) {
	s := newTestSandbox(t)
	// /etc: a caller bind that exists on every host and is outside the
	// synthesized roots (the package directory may be under /tmp).
	j, err := s.admit(Spec{Path: "/usr/bin/true", ReadOnly: []string{"/etc"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, drop := range []bool{false, true} {
		p, err := compilePlan(j, "/tmp/job", 4, drop)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.names) != len(p.ops) {
			t.Fatalf("%d names for %d ops", len(p.names), len(p.ops))
		}
		for i, op := range p.ops {
			for _, r := range append(op.in[:], op.out) {
				if int(r) > numRegs {
					t.Errorf("op %d (%s) names register %d of %d", i, p.names[i], r, numRegs)
				}
			}
			if p.names[i] == "" {
				t.Errorf("op %d has no step name", i)
			}
		}
	}
}

// TestSetupFailureNamesStep: a plan step that fails in the child refuses
// the run as SANDBOX_UNAVAILABLE naming the step, and the command never
// starts.
func TestSetupFailureNamesStep(t *testing.T) {
	s := newTestSandbox(t)
	marker := t.TempDir() + "/ran"
	for _, tc := range []struct {
		name, missing string
		edit          func(*job)
	}{
		{"vanished bind source", "bind /nonexistent-coagent8-src", func(j *job) {
			j.binds = append(j.binds, bind{Src: "/nonexistent-coagent8-src", Dst: "/opt/x", Dir: true})
		}},
		{"command missing inside", "exec", func(j *job) { j.path = "/job/no-such-command" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := s.admit(Spec{Path: "/usr/bin/touch", Args: []string{marker}})
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(&j)
			_, err = s.runJob(testCtx(t), j, "")
			fe := fault.From(err)
			if fe == nil || fe.Code != fault.SandboxUnavailable || fe.Details["missing"] != tc.missing {
				t.Fatalf("err = %v (%#v), want SANDBOX_UNAVAILABLE missing %q", err, fe, tc.missing)
			}
		})
	}
}

// TestPID1HidesSupervisorArgv: PID 1 is a fork of the supervisor; the
// command must not read the supervisor's command line from /proc/1.
func TestPID1HidesSupervisorArgv(t *testing.T) {
	if len(argvBlock()) == 0 {
		t.Fatal("argvBlock found no argument block for this process")
	}
	s := newTestSandbox(t)
	var out bytes.Buffer
	r := runUnqualified(t, s, testCtx(t), Spec{Path: "/usr/bin/cat", Args: []string{"/proc/1/cmdline"}, Stdout: &out, Stderr: &out})
	if !r.Exit.Success() {
		t.Fatalf("exit %+v: %s", r.Exit, out.String())
	}
	if got := strings.Trim(out.String(), "\x00"); got != "" {
		t.Errorf("/proc/1/cmdline inside = %q, want only NUL bytes", got)
	}
}

// TestConcurrentRunsWhileCollecting forks PID 1s from several goroutines
// while others allocate and force garbage collections: the fork path must
// not depend on the runtime's state in the child.
func TestConcurrentRunsWhileCollecting(t *testing.T) {
	s := newTestSandbox(t)
	stop := make(chan struct{})
	var churn sync.WaitGroup
	churn.Add(1)
	go func() {
		defer churn.Done()
		var keep [][]byte
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			keep = append(keep, make([]byte, 64<<10))
			if i%64 == 0 {
				keep = nil
				runtime.GC()
			}
		}
	}()
	defer func() { close(stop); churn.Wait() }()
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 5 {
				var out bytes.Buffer
				want := fmt.Sprintf("run %d.%d", i, k)
				j, err := s.admit(Spec{Path: "/usr/bin/echo", Args: []string{want}, Stdout: &out})
				if err != nil {
					t.Error(err)
					return
				}
				r, err := s.runJob(testCtx(t), j, "")
				if err != nil || !r.Exit.Success() || strings.TrimSpace(out.String()) != want {
					t.Errorf("run %s: err %v exit %+v out %q", want, err, r.Exit, out.String())
				}
			}
		}()
	}
	wg.Wait()
}

// TestVforkExecConstants: vfork_linux_amd64.s writes the exec-failure
// record with these values spelled out as numbers.
func TestVforkExecConstants(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{{"recSetup", recSetup, 1}, {"stepExec", stepExec, 0x100004}, {"fdStatus", fdStatus, 3}} {
		if c.got != c.want {
			t.Errorf("%s = %#x, vfork_linux_amd64.s assumes %#x", c.name, c.got, c.want)
		}
	}
}

// TestUnreportedPID1Refuses: a PID 1 that dies before it can report (it
// could not arrange its descriptors) refuses the run; the command never
// starts and no receipt claims it ran.
func TestUnreportedPID1Refuses(t *testing.T) {
	s := newTestSandbox(t)
	testOnlyBadChildFd = true
	defer func() { testOnlyBadChildFd = false }()
	var out bytes.Buffer
	j, err := s.admit(Spec{Path: "/usr/bin/echo", Args: []string{"started"}, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.runJob(testCtx(t), j, "")
	if fe := fault.From(err); fe == nil || fe.Code != fault.SandboxUnavailable || fe.Details["missing"] != "descriptors" {
		t.Fatalf("err = %v; want SANDBOX_UNAVAILABLE missing descriptors", err)
	}
	if out.Len() != 0 {
		t.Errorf("the command ran: %q", out.String())
	}
}
