//go:build linux && amd64

package sandbox

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The sandbox's PID 1 is a fork of the supervisor that never runs Go code.
//
// Starting a second Go program inside the new namespaces (re-executing
// this binary as a helper) cost more than the whole of bwrap's run (issue
// 8 performance). Instead the supervisor compiles the setup into a plan of
// raw system calls (plan_linux.go), forks with clone3, and the child
// replays the plan with nothing but raw system calls, exactly as the
// standard library's own fork/exec child does between fork and execve
// (syscall/exec_linux.go, forkAndExecInChild1): no allocation, no locks, no
// stack growth, no write barriers, no race instrumentation. The child then
// forks the command, which execs at once, and stays as PID 1 only to reap
// orphans and report the command's wait status.
//
// The functions below that run in the child are go:nosplit and go:norace
// and call only other such functions or the assembly system-call stubs;
// the linker checks that the nosplit chain fits its stack.

// Linked to the runtime exactly as the standard library's os/exec is
// (runtime/proc.go keeps these for package syscall and for "widely used
// packages"; go.dev/issue/67401 promises not to change their signatures).
//
//go:linkname runtimeBeforeFork syscall.runtime_BeforeFork
func runtimeBeforeFork()

//go:linkname runtimeAfterFork syscall.runtime_AfterFork
func runtimeAfterFork()

//go:linkname runtimeAfterForkInChild syscall.runtime_AfterForkInChild
func runtimeAfterForkInChild()

// Descriptors of the child, in order; dup3'd from forkSpec.fds.
const (
	fdStatus  = 3 // write end of the status pipe (close-on-exec)
	fdSync    = 4 // read end of the release pipe (close-on-exec)
	fdV1Tasks = 5 // first of the v1 cgroup "tasks" files (close-on-exec)
)

// maxChildFds bounds forkSpec.fds: stdio, status, sync, up to 8 v1
// tasks files, the agent profile's gate socket, the candidate's lower
// tree, the git view's tree and up to maxPins pinned files.
const maxChildFds = 20

// Status records the child writes on fdStatus, each 16 bytes in one write.
const (
	recSetup = 1 // a setup step failed: step, errno
	recExit  = 2 // the command ended: wait status
	recAlive = 3 // the plan re-armed the parent-death signal (ignored)
	recExec  = 4 // the command has exec'd (vfork returned): pins are compared again
)

// exitFds is PID 1's exit code when it could not even arrange its
// descriptors (so it could not report on fdStatus).
const exitFds = 126

// Steps that are not plan ops (plan op indexes are below stepBase).
const (
	stepBase    = 1 << 20
	stepFds     = stepBase + 1
	stepRelease = stepBase + 2
	stepFork    = stepBase + 3
	stepExec    = stepBase + 4
	stepWait    = stepBase + 5
)

// cloneArgs is struct clone_args (linux/sched.h), 88 bytes.
type cloneArgs struct {
	flags, pidFD, childTID, parentTID, exitSignal, stack, stackSize, tls, setTID, setTIDSize, cgroup uint64
}

// forkSpec is everything the child reads. It is built and kept alive by
// the supervisor; the child gets its own copy-on-write copy.
type forkSpec struct {
	clone cloneArgs
	pidfd int32
	nfds  int
	fds   [maxChildFds]uintptr // source descriptor for child fd i
	cloex [maxChildFds]uintptr // O_CLOEXEC or 0 for child fd i
	ops   []sysOp
	regs  [numRegs]uintptr
	path  *byte
	argv  []*byte // NUL-pointer terminated
	envv  []*byte // NUL-pointer terminated
	// wipe is the supervisor's argv/environment block [start, end), zeroed
	// in the child so the command cannot read it from /proc/1/cmdline.
	wipe []byte
	rec  [4]uint32
	ws   uint32
	one  [1]byte
}

// forkChild forks the sandbox's PID 1 with s.clone and returns its pid in
// the parent. In the child it runs childMain and never returns. Like the
// standard library's forkAndExecInChild1, nothing between
// runtimeBeforeFork and the return may allocate or grow the stack.
//
//go:noinline
//go:norace
//go:nocheckptr
func forkChild(s *forkSpec) (pid uintptr, err syscall.Errno) {
	runtimeBeforeFork()
	pid, _, err = syscall.RawSyscall(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&s.clone)), unsafe.Sizeof(s.clone), 0)
	if err != 0 || pid != 0 {
		runtimeAfterFork()
		return pid, err
	}
	childMain(s)
	return 0, 0
}

// vforkExec starts the command (vfork_linux_amd64.s); it relies on
// recSetup == 1, stepExec == 0x100004 and fdStatus == 3
// (TestVforkExecConstants).
//
//go:noescape
func vforkExec(path, argv, envp, rec uintptr) (pid, errno uintptr)

// childMain is PID 1 of the sandbox.
//
//go:nosplit
//go:norace
func childMain(s *forkSpec) {
	runtimeAfterForkInChild()
	for i := 0; i < s.nfds; i++ {
		if _, _, e := syscall.RawSyscall(unix.SYS_DUP3, s.fds[i], uintptr(i), s.cloex[i]); e != 0 {
			// Not reported: fdStatus may still be one of the
			// supervisor's own descriptors. The exit code tells.
			childExit(exitFds)
		}
	}
	if _, _, e := syscall.RawSyscall(unix.SYS_CLOSE_RANGE, uintptr(s.nfds), ^uintptr(0)>>32, 0); e != 0 {
		childFail(s, stepFds, e)
	}
	for i := range s.wipe {
		s.wipe[i] = 0
	}
	// The supervisor releases the child once the id maps and rlimits are
	// in place; end of file means it died first. The plan re-arms the
	// signal after its credential changes (plan.rearm).
	if _, _, e := syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0, 0); e != 0 {
		childFail(s, stepRelease, e)
	}
	if n, _, e := syscall.RawSyscall(unix.SYS_READ, fdSync, uintptr(unsafe.Pointer(&s.one[0])), 1); e != 0 || n != 1 {
		childFail(s, stepRelease, e)
	}
	syscall.RawSyscall(unix.SYS_CLOSE, fdSync, 0, 0)
	if i, e := runOps(s); e != 0 {
		childFail(s, uintptr(i), e)
	}
	cmd, e := vforkExec(uintptr(unsafe.Pointer(s.path)), uintptr(unsafe.Pointer(&s.argv[0])),
		uintptr(unsafe.Pointer(&s.envv[0])), uintptr(unsafe.Pointer(&s.rec)))
	if e != 0 {
		childFail(s, stepFork, syscall.Errno(e))
	}
	// vfork returns once the command's execve replaced its image (or it
	// exited): from here the executable is the one running.
	s.rec = [4]uint32{recExec, 0, 0, 0}
	syscall.RawSyscall(unix.SYS_WRITE, fdStatus, uintptr(unsafe.Pointer(&s.rec)), unsafe.Sizeof(s.rec))
	reapUntil(s, cmd)
}

// runOps replays the plan; it returns the failing op's index and errno.
//
//go:nosplit
//go:norace
func runOps(s *forkSpec) (int, syscall.Errno) {
	for i := 0; i < len(s.ops); i++ {
		op := &s.ops[i]
		a := op.args
		for k := 0; k < 6; k++ {
			if r := op.in[k]; r > 0 {
				a[k] = s.regs[(r-1)%numRegs]
			}
		}
		r, _, e := syscall.RawSyscall6(op.nr, a[0], a[1], a[2], a[3], a[4], a[5])
		if e != 0 && e != op.ok {
			return i, e
		}
		if op.out > 0 {
			s.regs[(op.out-1)%numRegs] = r
		}
		if op.store != nil {
			*op.store = int(r)
		}
	}
	return 0, 0
}

// reapUntil waits for every child until the command's own status arrives
// (PID 1 inherits every orphan), reports it and exits; the kernel then
// kills whatever is left in the PID namespace.
//
//go:nosplit
//go:norace
func reapUntil(s *forkSpec, cmd uintptr) {
	for {
		pid, _, e := syscall.RawSyscall6(unix.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&s.ws)), 0, 0, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			childFail(s, stepWait, e)
		}
		if pid == cmd {
			s.rec = [4]uint32{recExit, 0, 0, s.ws}
			syscall.RawSyscall(unix.SYS_WRITE, fdStatus, uintptr(unsafe.Pointer(&s.rec)), unsafe.Sizeof(s.rec))
			childExit(0)
		}
	}
}

// childFail reports a setup failure and exits 125.
//
//go:nosplit
//go:norace
func childFail(s *forkSpec, step uintptr, e syscall.Errno) {
	s.rec = [4]uint32{recSetup, uint32(step), uint32(e), 0}
	syscall.RawSyscall(unix.SYS_WRITE, fdStatus, uintptr(unsafe.Pointer(&s.rec)), unsafe.Sizeof(s.rec))
	childExit(125)
}

//go:nosplit
//go:norace
func childExit(code uintptr) {
	for {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, code, 0, 0)
	}
}
