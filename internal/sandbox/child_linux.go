//go:build linux && amd64

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// helperArg0 is the hidden argv[0] marker of the re-executed helper. It is
// not a flag: a user typing it gains nothing, because the helper reads its
// whole policy from fd 3 and refuses without it.
const helperArg0 = "coagent8-sandbox-helper"

// Descriptors the supervisor passes to the helper (exec.Cmd.ExtraFiles).
const (
	fdPolicy  = 3
	fdStatus  = 4
	fdV1Tasks = 5 // first of childPolicy.V1Tasks v1 cgroup "tasks" files
)

// maxV1Tasks bounds childPolicy.V1Tasks (memory, pids, cpu, cpuacct).
const maxV1Tasks = 8

// nobody is the host and namespace id the command runs as when the
// supervisor is root (the helper itself stays namespace root to mount).
const nobody = 65534

// childPolicy is the helper's whole input, written by the supervisor.
type childPolicy struct {
	JobRoot  string   `json:"job_root"`
	Path     string   `json:"path"`
	Argv     []string `json:"argv"`
	Env      []string `json:"env"`
	Dir      string   `json:"dir"`
	Binds    []bind   `json:"binds"`
	TmpBytes int64    `json:"tmp_bytes"`
	DropUID  bool     `json:"drop_uid"`
	// V1Tasks is how many v1 cgroup "tasks" files the supervisor passed
	// from fdV1Tasks on (0 when every limit lives in the v2 leaf).
	V1Tasks int `json:"v1_tasks"`
}

// childStatus is what the helper reports on fd 4: a setup failure, or the
// command's wait status.
type childStatus struct {
	Reason  string `json:"reason,omitempty"`
	Missing string `json:"missing,omitempty"`
	Error   string `json:"error,omitempty"`
	Exited  bool   `json:"exited"`
	Code    int    `json:"code"`
	Signal  int    `json:"signal"`
}

// MaybeRunChild runs the sandbox helper or a containment probe when this
// process was started as one, and never returns in that case. In any other
// process it returns immediately. Call it first thing in main and in
// TestMain, before flags are parsed:
//
//	func main() { sandbox.MaybeRunChild(); ... }
func MaybeRunChild() {
	if len(os.Args) > 0 && os.Args[0] == helperArg0 {
		os.Exit(helperMain())
	}
	if len(os.Args) > 2 && os.Args[1] == probeArg {
		os.Exit(probeMain(os.Args[2], os.Args[3:]))
	}
}

// helperMain is PID 1 of the sandbox: it builds the root, restricts its
// locked thread, forks the command from that thread and reaps until the
// command exits. Its exit takes every remaining process in the PID
// namespace with it.
func helperMain() int {
	// Mounts, credentials, Landlock and seccomp are per-thread state here;
	// the command is forked from this same thread.
	runtime.LockOSThread()
	_ = unix.CloseRange(fdStatus+1, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	status := os.NewFile(fdStatus, "status")
	syscall.CloseOnExec(fdStatus)
	syscall.CloseOnExec(fdPolicy)
	report := func(st childStatus) { _ = json.NewEncoder(status).Encode(st) }
	var p childPolicy
	if err := json.NewDecoder(os.NewFile(fdPolicy, "policy")).Decode(&p); err != nil {
		report(childStatus{Reason: "policy", Missing: "a policy from the supervisor", Error: err.Error()})
		return 125
	}
	if err := joinV1Self(p.V1Tasks); err != nil {
		report(setupStatus(err))
		return 125
	}
	pid, err := setupAndSpawn(p)
	if err != nil {
		report(setupStatus(err))
		return 125
	}
	ws := reap(pid)
	st := childStatus{Exited: ws.Exited(), Code: ws.ExitStatus()}
	if ws.Signaled() {
		st.Signal = int(ws.Signal())
	}
	report(st)
	if st.Exited {
		return st.Code
	}
	return 128 + st.Signal
}

// joinV1Self moves this thread, the one that forks the command, into each
// v1 job cgroup by writing "0" to the tasks files the supervisor opened
// (the command inherits them at fork). A thread moving itself skips the
// kernel's global threadgroup lock that a cgroup.procs write by the
// supervisor takes (cgroup_procs_write_start); see openV1Tasks. It runs
// before anything else, so the whole setup is inside the limits. Any
// failure refuses the run.
func joinV1Self(n int) error {
	if n < 0 || n > maxV1Tasks {
		return step("cgroup v1 join", fmt.Errorf("bad tasks count %d", n))
	}
	for fd := fdV1Tasks; fd < fdV1Tasks+n; fd++ {
		_, err := unix.Write(fd, []byte("0"))
		unix.Close(fd)
		if err != nil {
			return step("cgroup v1 join", err)
		}
	}
	return nil
}

// stepError names the setup step that failed (it becomes the refusal's
// "missing" detail).
type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string { return e.step + ": " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

func step(name string, err error) error {
	if err == nil {
		return nil
	}
	return &stepError{name, err}
}

func setupStatus(err error) childStatus {
	var se *stepError
	if errors.As(err, &se) {
		return childStatus{Reason: "setup", Missing: se.step, Error: err.Error()}
	}
	return childStatus{Reason: "setup", Missing: "sandbox setup", Error: err.Error()}
}

func setupAndSpawn(p childPolicy) (int, error) {
	if err := buildRoot(p); err != nil {
		return 0, err
	}
	if err := restrictThread(p); err != nil {
		return 0, err
	}
	pid, err := syscall.ForkExec(p.Path, p.Argv, &syscall.ProcAttr{
		Dir: p.Dir, Env: p.Env, Files: []uintptr{0, 1, 2},
	})
	return pid, step("exec", err)
}

// reap waits for pid, reaping re-parented orphans on the way (PID 1 duty).
func reap(pid int) syscall.WaitStatus {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || got == pid {
			return ws
		}
	}
}

// restrictThread drops every privilege of the calling thread, then applies
// Landlock and seccomp (notes §3 steps 7–9). Order: capabilities and ids
// while we still may change them, no_new_privs, Landlock, seccomp last.
func restrictThread(p childPolicy) error {
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	for c := 0; c < 64; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); errors.Is(err, unix.EINVAL) {
			break
		} else if err != nil {
			return step("capability bounding set", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return step("ambient capabilities", err)
	}
	// SECBIT_NOROOT|_LOCKED, SECBIT_KEEP_CAPS_LOCKED,
	// SECBIT_NO_CAP_AMBIENT_RAISE|_LOCKED (linux/securebits.h): uid 0 gains
	// nothing at exec, and none of this can be undone.
	const bits = 1<<0 | 1<<1 | 1<<5 | 1<<6 | 1<<7
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, bits, 0, 0, 0); err != nil {
		return step("securebits", err)
	}
	if p.DropUID {
		if err := dropIDs(); err != nil {
			return err
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return step("capabilities", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return step("no_new_privs", err)
	}
	if err := restrictLandlock(); err != nil {
		return step("landlock", err)
	}
	return step("seccomp", installFilter(buildFilter()))
}

// dropIDs switches this thread (only) to nobody with no supplementary
// groups. Raw syscalls: Go's Setuid would change every thread.
func dropIDs() error {
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
		return step("setgroups", e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, nobody, nobody, nobody); e != 0 {
		return step("setresgid", e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, nobody, nobody, nobody); e != 0 {
		return step("setresuid", e)
	}
	return nil
}
