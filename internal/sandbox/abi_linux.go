//go:build linux && amd64

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Foreign system-call ABIs (ia32 through int 0x80, x32 through the
// x86_64 entry with bit 30 set) must never run inside the sandbox: the
// seccomp filter kills them with SIGSYS before anything else (seccomp_linux.go).
// But a host may lack the mechanism itself: on some hypervisors int 0x80
// faults (SIGSEGV) even with no sandbox at all, although the kernel has
// CONFIG_IA32_EMULATION=y; a kernel without the x32 ABI answers ENOSYS.
// Such a probe tells three outcomes apart (issue 14): the sandbox killed
// the call (contained), the call ran (not contained), or the call did not
// run inside because the host cannot run it at all, which a control run of
// the same call outside seccomp must show too (contained, and the record
// names the missing mechanism). When the inside and the control disagree,
// the probe cannot tell and fails.

// abiOutcome is what a foreign-ABI probe saw of its own call.
type abiOutcome string

const (
	abiRan    abiOutcome = "ran"    // the call reached the kernel and returned
	abiAbsent abiOutcome = "absent" // the host has no such entry: fault or ENOSYS
)

// abiProbes run inside the sandbox and, for the control, on the host.
var abiProbes = map[string]func() probeReport{"ia32": probeIA32, "x32": probeX32}

// filterSeesFirst marks the ABIs whose calls enter through the x86_64
// entry, where seccomp runs before the kernel's dispatch could answer
// ENOSYS: a correct filter kills them on every host, so "absent" inside
// can only mean the filter let the call through (x32 numbers carry bit 30
// on the normal syscall instruction).
var filterSeesFirst = map[string]bool{"x32": true}

// abiMechanisms names each probe's mechanism as the record states it.
var abiMechanisms = map[string]string{
	"ia32": "ia32 system-call entry (int 0x80)",
	"x32":  "x32 system-call ABI",
}

// probeIA32 makes the ia32 socket() call through the int 0x80 gate. A
// missing gate faults before any system call is made; the runtime turns
// that fault into a panic (SetPanicOnFault) that is reported, not a crash.
func probeIA32() (rep probeReport) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		// The gate's #GP/#NP arrives as SIGSEGV; the runtime reports it
		// as a memory fault.
		if r := recover(); r != nil {
			rep = probeReport{Outcome: abiAbsent, Detail: "int 0x80 faulted (SIGSEGV) before any system call"}
		}
	}()
	r := int64(int80(359, unix.AF_INET6, unix.SOCK_STREAM, 0)) // ia32 socket()
	if r >= 0 {
		unix.Close(int(r))
	}
	return probeReport{Outcome: abiRan, Detail: fmt.Sprintf("ia32 socket() returned %d", r)}
}

// probeX32 makes the x32 getpid() call.
func probeX32() probeReport {
	r, _, e := unix.RawSyscall(x32SyscallBit|unix.SYS_GETPID, 0, 0, 0)
	if e == unix.ENOSYS {
		return probeReport{Outcome: abiAbsent, Detail: "x32 getpid() returned ENOSYS"}
	}
	return probeReport{Outcome: abiRan, Detail: fmt.Sprintf("x32 getpid() returned %d (errno %v)", int64(r), e)}
}

// abiControl is the control run of a foreign-ABI probe on the host.
type abiControl struct {
	rep probeReport
	err error // the control printed no report (its cause)
}

// controlRun runs the same probe as a plain child of this process, outside
// every sandbox layer, to learn whether the host can make the call at all.
func controlRun(ctx context.Context, name string) abiControl {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return abiControl{err: fmt.Errorf("control run: /proc/self/exe: %w", err)}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, probeArg, name)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var rep probeReport
	if jerr := json.Unmarshal(lastLine(out), &rep); jerr != nil || rep.Outcome == "" {
		return abiControl{err: fmt.Errorf("control run outside the sandbox printed no report (%v; stderr %q)", err, tail(stderr.Bytes(), 200))}
	}
	return abiControl{rep: rep}
}

// abiVerdict is the judgement of one foreign-ABI probe.
type abiVerdict struct {
	contained bool
	hostLacks string // the mechanism, when the host has none
	detail    string
}

// judgeForeignABI classifies a foreign-ABI probe from its run inside the
// sandbox (receipt, and its report when it printed one) and the control
// run of the same call on the host.
func judgeForeignABI(name string, r Receipt, in probeReport, reported bool, ctl abiControl) abiVerdict {
	mech := abiMechanisms[name]
	control := "control outside seccomp: " + ctl.describe()
	switch {
	case r.Exit.Class == ExitSignalled && r.Exit.Signal == "SIGSYS":
		return abiVerdict{contained: true, detail: "killed by the seccomp filter (SIGSYS); " + control}
	case !r.Exit.Success() || !reported:
		return abiVerdict{detail: fmt.Sprintf("the probe could not run: %s, report %q; %s", exitText(r.Exit), in.Detail, control)}
	case in.Outcome == abiRan:
		return abiVerdict{detail: "NOT CONTAINED: the call ran inside the sandbox: " + in.Detail + "; " + control}
	case in.Outcome == abiAbsent && filterSeesFirst[name]:
		return abiVerdict{detail: "NOT CONTAINED: the call reached the kernel inside the sandbox (" + in.Detail +
			"): the filter, which sees it first on every host, did not kill it; " + control}
	case in.Outcome == abiAbsent && ctl.err == nil && ctl.rep.Outcome == abiAbsent:
		return abiVerdict{contained: true, hostLacks: mech, detail: fmt.Sprintf(
			"this host has no %s: inside: %s; %s; nothing can run there", mech, in.Detail, control)}
	case in.Outcome == abiAbsent:
		return abiVerdict{detail: fmt.Sprintf(
			"cannot tell: inside the call did not run (%s) but %s; the filter was not seen to kill it", in.Detail, control)}
	}
	return abiVerdict{detail: fmt.Sprintf("the probe reported an unknown outcome %q: %s; %s", in.Outcome, in.Detail, control)}
}

func (c abiControl) describe() string {
	if c.err != nil {
		return c.err.Error()
	}
	return fmt.Sprintf("%s (%s)", c.rep.Outcome, c.rep.Detail)
}

// exitText describes a run's end for a probe record.
func exitText(e Exit) string {
	switch e.Class {
	case ExitExited:
		return fmt.Sprintf("exited with status %d", e.Code)
	case ExitSignalled:
		return "killed by " + e.Signal
	}
	if e.Signal != "" {
		return e.Class.String() + " (" + e.Signal + ")"
	}
	return e.Class.String()
}

// tail returns the last n bytes of b, trimmed, as text.
func tail(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.ToValidUTF8(string(b), "?")
}

// hostStillLacks re-runs the control of every probe the record found
// absent from this host: a mechanism that has appeared since (a reboot
// with ia32 emulation, the same kernel release) voids the record, whose
// filter arm for it was never exercised here.
func (q *Qualification) hostStillLacks(ctx context.Context) bool {
	for _, p := range q.Probes {
		if p.HostLacks == "" {
			continue
		}
		if c := controlRun(ctx, p.Name); c.err != nil || c.rep.Outcome != abiAbsent {
			return false
		}
	}
	return true
}

// head returns the first n bytes of b, trimmed, as text (a crashed Go
// probe's first lines name the fatal error; its tail is stack).
func head(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[:n]
	}
	return strings.ToValidUTF8(string(b), "?")
}
