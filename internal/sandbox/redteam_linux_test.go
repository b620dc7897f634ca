//go:build linux && amd64

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// Adversarial tests of the sandbox's process structure. PID 1 is a
// copy-on-write fork of the supervisor (fork_linux.go): what it holds must
// stay out of the command's reach, the command must not be able to stop
// it or forge its report, and it must not outlive the supervisor.

// redteamSupervisorEnv makes the test binary act as a supervisor process
// ("mode:stateDir:jobID"): mode "sleep" runs a long command and waits to be
// killed, mode "pid1" runs redteamInside against its own PID 1.
const redteamSupervisorEnv = "COAGENT8_REDTEAM_SUPERVISOR"

// redteamCanaryEnv holds a synthetic secret in the supervisor's own
// environment block (the one /proc/<pid>/environ shows).
const redteamCanaryEnv = "COAGENT8_REDTEAM_CANARY"

// redteamInsideArg is argv[1] of the test binary run inside the sandbox.
const redteamInsideArg = "__coagent8_redteam_inside__"

// redteamInsidePath is where the test binary is bound inside.
const redteamInsidePath = "/job/redteam"

func init() {
	if len(os.Args) > 1 && os.Args[1] == redteamInsideArg {
		os.Exit(redteamInside(os.Args[2:]))
	}
	if v := os.Getenv(redteamSupervisorEnv); v != "" {
		os.Exit(redteamSupervisor(v))
	}
}

// redteamSupervisor is the helper supervisor process.
func redteamSupervisor(v string) int {
	f := strings.SplitN(v, ":", 3)
	if len(f) != 3 {
		return 2
	}
	s, err := New(Config{StateDir: f[1]})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	spec := Spec{Path: "/usr/bin/dash", Args: []string{"-c", "echo started; exec sleep 60"}, Stdout: os.Stdout, Stderr: os.Stderr}
	var secret string
	if f[0] == "pid1" {
		// The canary also lives in this process's heap; the command gets
		// it in two halves so only the supervisor's copies hold it whole.
		secret = strings.Clone(os.Getenv(redteamCanaryEnv))
		spec = Spec{Path: "/usr/bin/true", Stdout: os.Stdout, Stderr: os.Stderr}
	}
	j, err := s.admit(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	j.id = f[2]
	if f[0] == "pid1" {
		exe, err := os.Readlink("/proc/self/exe")
		if err != nil {
			return 2
		}
		j.path = redteamInsidePath
		j.args = []string{redteamInsideArg, secret[:len(secret)/2], secret[len(secret)/2:]}
		j.binds = append(j.binds, bind{Src: exe, Dst: redteamInsidePath})
	}
	r, err := s.runJob(context.Background(), j, "")
	if err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		return 3
	}
	fmt.Printf("EXIT %s %d %v\n", r.Exit.Class, r.Exit.Code, r.TreeEmpty)
	runtimeKeepString(secret)
	return 0
}

//go:noinline
func runtimeKeepString(s string) { _ = len(s) }

// startSupervisor starts the helper supervisor in mode with a fresh job id
// and canary in its argument and environment blocks, and returns it, its
// stdout and the job's cgroups. Cleanup
// kills what is left and removes the job's cgroups and root.
func startSupervisor(t *testing.T, mode, canary string) (*exec.Cmd, *bufio.Reader, *jobCgroups) {
	t.Helper()
	state, id := t.TempDir(), newJobID()
	cmd := exec.Command("/proc/self/exe", "-test.run=^$", "-canary="+canary)
	cmd.Env = append(os.Environ(), redteamSupervisorEnv+"="+mode+":"+state+":"+id, redteamCanaryEnv+"="+canary)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	layout, err := detectCgroups("/sys/fs/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	cg := layout.job(id)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if _, err := os.Stat(cg.leaf); err == nil {
			_ = cg.kill()
			cg.waitEmpty(emptyTimeout)
		}
		cg.remove()
		if s, err := New(Config{StateDir: state}); err == nil {
			os.RemoveAll(filepath.Join(s.cfg.JobsDir, id)) // left by a killed supervisor
		}
	})
	return cmd, bufio.NewReader(out), cg
}

// TestSupervisorKillEndsTree: when the process running the sandbox is
// SIGKILLed mid-run, PID 1 and the command die with it (parent-death
// signal), leaving the job's cgroup empty. Before plan.rearm, a root
// supervisor's setresuid cleared PID 1's parent-death signal and the tree
// lived on.
func TestSupervisorKillEndsTree(t *testing.T) {
	cmd, out, cg := startSupervisor(t, "sleep", "none")
	if line, err := out.ReadString('\n'); err != nil || line != "started\n" {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	procs, _ := os.ReadFile(cg.leaf + "/cgroup.procs")
	if n := len(strings.Fields(string(procs))); n != 2 {
		t.Fatalf("job cgroup holds %d processes before the kill, want 2 (PID 1 and sleep)", n)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !cg.waitEmpty(2 * time.Second) {
		procs, _ := os.ReadFile(cg.leaf + "/cgroup.procs")
		t.Errorf("sandbox processes outlived the supervisor's SIGKILL: %q", strings.Fields(string(procs)))
	}
}

// TestPlanRearmsAfterIDChange: the non-dumpable flag and the parent-death
// signal are set after the last op that changes an id (each such change
// resets both), and before seccomp.
func TestPlanRearmsAfterIDChange(t *testing.T) {
	s := newTestSandbox(t)
	j, err := s.admit(Spec{Path: "/usr/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	idOps := []uintptr{unix.SYS_SETRESUID, unix.SYS_SETRESGID, unix.SYS_SETUID, unix.SYS_SETGID, unix.SYS_SETREUID,
		unix.SYS_SETREGID, unix.SYS_SETFSUID, unix.SYS_SETFSGID, unix.SYS_SETGROUPS}
	for _, drop := range []bool{false, true} {
		p, err := compilePlan(j, "/tmp/job", 0, drop)
		if err != nil {
			t.Fatal(err)
		}
		lastID, dumpable, pdeath, alive, seccomp := -1, -1, -1, -1, -1
		for i, op := range p.ops {
			switch {
			case slices.Contains(idOps, op.nr):
				lastID = i
			case op.nr == unix.SYS_PRCTL && op.args[0] == unix.PR_SET_DUMPABLE && op.args[1] == 0:
				dumpable = i
			case op.nr == unix.SYS_PRCTL && op.args[0] == unix.PR_SET_PDEATHSIG && op.args[1] == uintptr(syscall.SIGKILL):
				pdeath = i
			case op.nr == unix.SYS_WRITE && op.args[0] == fdStatus:
				alive = i
			case op.nr == unix.SYS_SECCOMP:
				seccomp = i
			}
		}
		if drop && lastID < 0 {
			t.Fatal("no id change in a root supervisor's plan")
		}
		if !(lastID < dumpable && dumpable < seccomp && lastID < pdeath && pdeath < alive && alive < seccomp) {
			t.Errorf("dropUID=%v: last id change at %d, dumpable at %d, pdeathsig at %d, alive at %d, seccomp at %d",
				drop, lastID, dumpable, pdeath, alive, seccomp)
		}
	}
}

// insideReport is what redteamInside found.
type insideReport struct {
	ExtraFDs   []string          `json:"extra_fds"`
	Forged     []string          `json:"forged"`  // fds a forged status record was written to
	Leaks      []string          `json:"leaks"`   // /proc/1 files holding the canary
	Allowed    []string          `json:"allowed"` // sensitive reads or calls that succeeded
	Denied     map[string]string `json:"denied"`
	Readable   int               `json:"readable"`
	StateAfter string            `json:"state_after"`
	AliveAfter bool              `json:"alive_after"`
}

// redteamInside runs inside the sandbox and attacks PID 1. args are the
// two halves of the supervisor's canary. It exits 42 after the attacks,
// so the receipt shows whether PID 1 still reported the command's status.
func redteamInside(args []string) int {
	var rep insideReport
	rep.Denied = map[string]string{}
	// Descriptors first, with raw system calls (before the runtime opens
	// anything of its own).
	d, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		rep.ExtraFDs = append(rep.ExtraFDs, "cannot list: "+err.Error())
	} else {
		buf := make([]byte, 8192)
		n, _ := unix.ReadDirent(d, buf)
		_, _, names := unix.ParseDirent(buf[:max(n, 0)], -1, nil)
		for _, name := range names {
			if v, _ := strconv.Atoi(name); v > 2 && v != d {
				t, _ := os.Readlink("/proc/self/fd/" + name)
				rep.ExtraFDs = append(rep.ExtraFDs, name+"->"+t)
			}
		}
		unix.Close(d)
	}
	// A forged "exited 0" record on every descriptor the status pipe
	// could be.
	forged := make([]byte, 16)
	forged[0] = recExit
	for fd := 3; fd < 64; fd++ {
		if n, err := unix.Write(fd, forged); err == nil && n > 0 {
			rep.Forged = append(rep.Forged, strconv.Itoa(fd))
		}
	}
	secret := []byte(strings.Join(args, ""))
	deny := func(name string, err error) {
		if err == nil {
			rep.Allowed = append(rep.Allowed, name)
			return
		}
		rep.Denied[name] = err.Error()
	}
	// Every file under /proc/1 that can be read must not hold the canary,
	// and the ones that expose memory, environment or descriptors must
	// not be readable at all.
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			p := dir + "/" + e.Name()
			switch {
			case e.Name() == "net" || e.Name() == "pagemap":
				continue
			case e.Type()&os.ModeSymlink != 0:
				if t, err := os.Readlink(p); err == nil && bytes.Contains([]byte(t), secret) {
					rep.Leaks = append(rep.Leaks, p)
				}
			case e.IsDir():
				if depth < 3 {
					walk(p, depth+1)
				}
			default:
				f, err := os.Open(p)
				if err != nil {
					continue
				}
				b, _ := io.ReadAll(io.LimitReader(f, 4<<20))
				f.Close()
				rep.Readable++
				if bytes.Contains(b, secret) {
					rep.Leaks = append(rep.Leaks, p)
				}
			}
		}
	}
	walk("/proc/1", 0)
	for _, f := range []string{"environ", "mem", "maps", "smaps", "auxv", "syscall", "stack", "pagemap", "fdinfo/3", "task/1/environ", "task/1/mem"} {
		b, err := os.ReadFile("/proc/1/" + f)
		if err == nil && len(b) == 0 && (f == "environ" || strings.HasSuffix(f, "/environ")) {
			err = errors.New("empty")
		}
		deny("read /proc/1/"+f, err)
	}
	for _, l := range []string{"exe", "cwd", "root", "fd/3", "ns/user", "map_files"} {
		_, err := os.Readlink("/proc/1/" + l)
		if l == "map_files" {
			_, err = os.ReadDir("/proc/1/" + l)
		}
		deny("readlink /proc/1/"+l, err)
	}
	errno := func(e syscall.Errno) error {
		if e == 0 {
			return nil
		}
		return e
	}
	_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_ATTACH, 1, 0, 0, 0, 0)
	deny("ptrace attach", errno(e))
	_, _, e = unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_SEIZE, 1, 0, 0, 0, 0)
	deny("ptrace seize", errno(e))
	buf := make([]byte, 64)
	_, err = unix.ProcessVMReadv(1, []unix.Iovec{{Base: &buf[0], Len: 64}}, []unix.RemoteIovec{{Base: uintptr(unsafe.Pointer(&buf[0])), Len: 64}}, 0)
	deny("process_vm_readv", err)
	_, _, e = unix.RawSyscall6(unix.SYS_KCMP, 1, uintptr(os.Getpid()), 0, 0, 0, 0)
	deny("kcmp", errno(e))
	if pfd, err := unix.PidfdOpen(1, 0); err == nil {
		for fd := 0; fd < 8; fd++ {
			_, err := unix.PidfdGetfd(pfd, fd, 0)
			deny("pidfd_getfd "+strconv.Itoa(fd), err)
		}
		iov := []unix.Iovec{{Base: &buf[0], Len: 64}}
		_, _, e = unix.RawSyscall6(unix.SYS_PROCESS_MADVISE, uintptr(pfd), uintptr(unsafe.Pointer(&iov[0])), 1, unix.MADV_PAGEOUT, 0, 0)
		deny("process_madvise", errno(e))
		_ = unix.PidfdSendSignal(pfd, unix.SIGKILL, nil, 0) // must have no effect (below)
	}
	// Signals: the namespace's init drops signals it has no handler for,
	// so none of these may stop or end PID 1 (32 and 33 are glibc's
	// internal signals, 23 the Go runtime's preemption signal).
	for _, sig := range []syscall.Signal{syscall.SIGSTOP, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTERM, syscall.SIGINT,
		syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGPIPE, syscall.SIGSEGV, syscall.SIGSYS, syscall.SIGURG,
		32, 33, 34, syscall.SIGKILL} {
		_ = syscall.Kill(1, sig)
	}
	time.Sleep(20 * time.Millisecond)
	if b, err := os.ReadFile("/proc/1/stat"); err == nil {
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) {
			rep.StateAfter = string(b[i+2])
		}
	}
	rep.AliveAfter = syscall.Kill(1, 0) == nil
	_ = json.NewEncoder(os.Stdout).Encode(rep)
	return 42
}

// TestCommandCannotReachPID1: the command cannot read PID 1's memory,
// environment or descriptors by any route (no /proc/1 file holds a canary
// the supervisor keeps in its environment block and heap), cannot forge a
// status record, inherits no descriptor beyond 0–2, and cannot stop or
// kill PID 1 with any signal: the run still reports the command's own
// exit code.
func TestCommandCannotReachPID1(t *testing.T) {
	canary := "rt-canary-" + newJobID()
	cmd, out, _ := startSupervisor(t, "pid1", canary)
	b, _ := io.ReadAll(out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper supervisor: %v\n%s", err, b)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("helper output:\n%s", b)
	}
	if lines[1] != "EXIT exited 42 true" {
		t.Errorf("run ended %q, want the command's own exit 42 with an empty tree", lines[1])
	}
	var rep insideReport
	if err := json.Unmarshal([]byte(lines[0]), &rep); err != nil {
		t.Fatalf("report %q: %v", lines[0], err)
	}
	if len(rep.ExtraFDs) > 0 || len(rep.Forged) > 0 {
		t.Errorf("command holds descriptors beyond stdio %v; forged records written to %v", rep.ExtraFDs, rep.Forged)
	}
	if len(rep.Leaks) > 0 || len(rep.Allowed) > 0 {
		t.Errorf("PID 1 reachable: canary in %v; allowed %v", rep.Leaks, rep.Allowed)
	}
	if rep.Readable < 10 || len(rep.Denied) < 20 {
		t.Errorf("the walk read %d /proc/1 files and saw %d denials; the attack did not run as intended", rep.Readable, len(rep.Denied))
	}
	if !rep.AliveAfter || rep.StateAfter == "T" || rep.StateAfter == "t" {
		t.Errorf("PID 1 after signals from inside: alive %v, state %q", rep.AliveAfter, rep.StateAfter)
	}
}

// TestNoDescriptorLeakPerRun: a run leaves no descriptor behind in the
// supervisor (the MCP server runs many; PID 1's pidfd was never closed).
func TestNoDescriptorLeakPerRun(t *testing.T) {
	s := newTestSandbox(t)
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	run := func() {
		r := runUnqualified(t, s, testCtx(t), Spec{Path: "/usr/bin/true"})
		if !r.Exit.Success() {
			t.Fatalf("exit %+v", r.Exit)
		}
	}
	run() // the runtime's own lazily opened descriptors
	before := count()
	for range 5 {
		run()
	}
	if after := count(); after > before {
		t.Errorf("5 runs left %d descriptors open", after-before)
	}
}

// TestAdmissionCoversExecLimits: admission bounds stay within execve's, so
// an admitted command never fails at exec for its size (that refused as
// SANDBOX_UNAVAILABLE "exec", blaming the host: an argument of exactly
// maxArgLen bytes, or a large environment, was admitted and failed with
// E2BIG), and one beyond them is INVALID_INPUT.
func TestAdmissionCoversExecLimits(t *testing.T) {
	s := newTestSandbox(t)
	big := strings.Repeat("a", maxArgLen)
	r := runUnqualified(t, s, testCtx(t), Spec{Path: "/usr/bin/true", Args: []string{big}, Env: []string{"BIG=" + big[4:]}})
	if !r.Exit.Success() {
		t.Errorf("longest admitted argument and environment entry: exit %+v", r.Exit)
	}
	for name, spec := range map[string]Spec{
		"argument":          {Path: "/usr/bin/true", Args: []string{big + "a"}},
		"environment entry": {Path: "/usr/bin/true", Env: []string{"BIG=" + big[3:]}},
		"total":             {Path: "/usr/bin/true", Args: slices.Repeat([]string{big}, maxArgTotal/maxArgLen), Env: []string{"BIG=" + big[4:]}},
		"environment total": {Path: "/usr/bin/true", Env: manyEnv(30, 100<<10)},
	} {
		if _, err := s.admit(spec); !fault.HasCode(err, fault.InvalidInput) {
			t.Errorf("%s over the exec bound: admit err %v, want INVALID_INPUT", name, err)
		}
	}
}

func manyEnv(n, size int) []string {
	var env []string
	for i := range n {
		env = append(env, fmt.Sprintf("E%d=%s", i, strings.Repeat("v", size)))
	}
	return env
}

// TestCancelRacesLeaveNothing: cancellation at any point of a run (before
// it starts, during setup, while the command runs) ends in a verified
// empty tree, a cancelled or exited receipt and no job cgroup left.
func TestCancelRacesLeaveNothing(t *testing.T) {
	s := newTestSandbox(t)
	layout, err := detectCgroups("/sys/fs/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j, err := s.admit(Spec{Path: "/usr/bin/sleep", Args: []string{"5"}})
			if err != nil {
				t.Error(err)
				return
			}
			j.id = newJobID()
			ctx, cancel := context.WithCancel(context.Background())
			if i%4 == 0 {
				cancel()
			} else {
				time.AfterFunc(time.Duration(rand.IntN(20000))*time.Microsecond, cancel)
			}
			defer cancel()
			r, err := s.runJob(ctx, j, "")
			if err != nil || !r.TreeEmpty || r.Exit.Class != ExitCancelled {
				t.Errorf("run %d: err %v, exit %+v, tree empty %v", i, err, r.Exit, r.TreeEmpty)
			}
			if _, err := os.Stat(filepath.Join(layout.v2, j.id)); err == nil {
				t.Errorf("run %d left its cgroup", i)
			}
		}()
	}
	wg.Wait()
}

// TestLateSetupFailureRunsNothing: a step that fails at the end of the
// plan (after the privilege drop) refuses with SANDBOX_UNAVAILABLE naming
// it, and the command never starts (it would have printed).
func TestLateSetupFailureRunsNothing(t *testing.T) {
	s := newTestSandbox(t)
	var out bytes.Buffer
	j, err := s.admit(Spec{Path: "/usr/bin/echo", Args: []string{"RAN"}, Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	j.dir = insideWorkspace + "/missing"
	_, err = s.runJob(testCtx(t), j, "")
	if fe := fault.From(err); fe == nil || fe.Code != fault.SandboxUnavailable || fe.Details["missing"] != "working directory" {
		t.Errorf("err = %v, want SANDBOX_UNAVAILABLE missing \"working directory\"", err)
	}
	if out.Len() > 0 {
		t.Errorf("the command ran: %q", out.String())
	}
}

// TestConcurrentExecFailures: runs whose exec fails and runs that succeed,
// concurrently, each get their own report (no record crosses runs).
func TestConcurrentExecFailures(t *testing.T) {
	s := newTestSandbox(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out bytes.Buffer
			want := fmt.Sprintf("run-%d", i)
			j, err := s.admit(Spec{Path: "/usr/bin/echo", Args: []string{want}, Stdout: &out})
			if err != nil {
				t.Error(err)
				return
			}
			if i%2 == 1 {
				j.path = "/job/workspace/" + want // missing inside
			}
			r, err := s.runJob(testCtx(t), j, "")
			fe := fault.From(err)
			switch {
			case i%2 == 1 && (fe == nil || fe.Details["missing"] != "exec" || out.Len() > 0):
				t.Errorf("%s: err %v, output %q; want an exec refusal", want, err, out.String())
			case i%2 == 0 && (err != nil || !r.Exit.Success() || strings.TrimSpace(out.String()) != want):
				t.Errorf("%s: err %v, exit %+v, output %q", want, err, r.Exit, out.String())
			}
		}()
	}
	wg.Wait()
}

// TestReadOnlyBindSwappedForSymlink: a caller's read-only path that turns
// into a symlink after admission (it was checked symlink-free) is not
// followed at bind time: the run is refused and the link's target never
// appears inside. Before, the child's mount(2) followed the link.
func TestReadOnlyBindSwappedForSymlink(t *testing.T) {
	s := newTestSandbox(t)
	dir, err := os.MkdirTemp("/var/tmp", "coagent8-swap-") // /tmp is synthesized inside
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	marker := "swapped-" + newJobID()
	if err := errors.Join(os.Chmod(dir, 0o755), os.Mkdir(dir+"/ro", 0o755), os.Mkdir(dir+"/other", 0o755),
		os.WriteFile(dir+"/other/f", []byte(marker), 0o644)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	j, err := s.admit(Spec{Path: "/usr/bin/cat", Args: []string{dir + "/ro/f"}, ReadOnly: []string{dir + "/ro"}, Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(os.Remove(dir+"/ro"), os.Symlink(dir+"/other", dir+"/ro")); err != nil {
		t.Fatal(err)
	}
	r, err := s.runJob(testCtx(t), j, "")
	if strings.Contains(out.String(), marker) {
		t.Fatalf("the symlink's target was bound: exit %+v, output %q", r.Exit, out.String())
	}
	if fe := fault.From(err); fe == nil || fe.Code != fault.SandboxUnavailable || fe.Details["missing"] != "bind "+dir+"/ro" {
		t.Errorf("err = %v, want SANDBOX_UNAVAILABLE missing %q", err, "bind "+dir+"/ro")
	}
}
