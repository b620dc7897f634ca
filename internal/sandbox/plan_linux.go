//go:build linux && amd64

package sandbox

import (
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sysOp is one system call the sandbox's PID 1 makes, after the fork and
// before the command starts, to build and restrict the sandbox. The
// supervisor compiles the whole setup into a list of these (a plan) before
// it forks, because the forked child may not run ordinary Go code (see
// fork_linux.go): every argument is a number or a pointer into memory the
// plan keeps alive, and results needed later go to a small register file.
type sysOp struct {
	nr   uintptr
	args [6]uintptr
	// in[i] > 0 takes argument i from register in[i]-1 instead of args[i].
	in [6]uint8
	// out > 0 saves the result in register out-1.
	out uint8
	// store, when set, also receives the result (a landlock rule's fd).
	store *int
	// ok is an errno that does not fail the step (EEXIST for a mount
	// point that is already there), 0 for none.
	ok syscall.Errno
}

// numRegs is the size of the child's register file.
const numRegs = 4

// Registers used by the plan.
const (
	regFile    = 1 // a file being written or a landlock rule's path fd
	regRuleset = 2 // the landlock ruleset fd
	regTree    = 3 // a detached mount tree being bound
)

// plan is the compiled setup of one job: the ops and, per op, the step
// name a failure reports (it becomes the refusal's "missing" detail).
type plan struct {
	ops   []sysOp
	names []string
	keep  []any // memory the ops point into
	// fdTree is PID 1's descriptor of the supervisor's idmapped candidate
	// lower tree, or -1; fdGit the same for the git view (gitRoots).
	fdTree, fdGit int
	// fdPins are PID 1's descriptors of the pinned files' mounts, by bind
	// index.
	fdPins map[int]int
	// extraRW are further directories Landlock grants read-write (the
	// candidate's git view).
	extraRW []string
}

// cstr returns a NUL-terminated copy of s kept alive by the plan.
func (p *plan) cstr(s string) uintptr {
	b := append([]byte(s), 0)
	p.keep = append(p.keep, b)
	return uintptr(unsafe.Pointer(&b[0]))
}

// bytes returns a pointer to a copy of b kept alive by the plan.
func (p *plan) bytes(b []byte) uintptr {
	c := append([]byte(nil), b...)
	p.keep = append(p.keep, c)
	return uintptr(unsafe.Pointer(&c[0]))
}

func (p *plan) add(name string, op sysOp) {
	p.ops = append(p.ops, op)
	p.names = append(p.names, name)
}

func (p *plan) call(name string, nr uintptr, args ...uintptr) {
	var op sysOp
	op.nr = nr
	copy(op.args[:], args)
	p.add(name, op)
}

// Steps the plan expresses as several ops.

func (p *plan) mkdir(name, path string, mode uint32) {
	p.add(name, sysOp{nr: unix.SYS_MKDIRAT, args: [6]uintptr{atFDCWD, p.cstr(path), uintptr(mode)}, ok: unix.EEXIST})
}

// mkdirAll creates every missing directory of path below the fresh root
// (the root itself exists).
func (p *plan) mkdirAll(name, root, path string) {
	rel := strings.TrimPrefix(path, root)
	for i := 1; i <= len(rel); i++ {
		if i == len(rel) || rel[i] == '/' {
			p.mkdir(name, root+rel[:i], 0o755)
		}
	}
}

func (p *plan) mount(name, src, dst, fstype string, flags uintptr, data string) {
	args := []uintptr{p.cstr(src), p.cstr(dst), p.cstr(fstype), flags, 0}
	if data != "" {
		args[4] = p.cstr(data)
	}
	if src == "" {
		args[0] = 0
	}
	if fstype == "" {
		args[2] = 0
	}
	p.call(name, unix.SYS_MOUNT, args...)
}

// setattr applies mount attributes to path (recursively when rec).
func (p *plan) setattr(name, path string, attrs uint64, rec bool) {
	a := &unix.MountAttr{Attr_set: attrs}
	p.keep = append(p.keep, a)
	flags := uintptr(0)
	if rec {
		flags = unix.AT_RECURSIVE
	}
	p.call(name, unix.SYS_MOUNT_SETATTR, atFDCWD, p.cstr(path), flags, uintptr(unsafe.Pointer(a)), unsafe.Sizeof(*a))
}

// bind binds src at dst (creating the mount point) and sets attrs on the
// whole bound tree (AT_RECURSIVE, so submounts are read-only too).
func (p *plan) bind(root, src, dst string, dir bool, attrs uint64) {
	p.mountPoint(root, dst, dir)
	p.mount("bind "+src, src, dst, "", unix.MS_BIND|unix.MS_REC, "")
	p.setattr("mount attributes "+src, dst, attrs, true)
}

// bindNoSymlinks is bind for a caller's path, which admission found free
// of symlinks: the child opens src with RESOLVE_NO_SYMLINKS and binds what
// it opened (open_tree, move_mount), so a component swapped for a symlink
// since admission fails the step instead of being followed (mount(2)
// follows every symlink of its source).
func (p *plan) bindNoSymlinks(root, src, dst string, dir bool, attrs uint64) {
	p.mountPoint(root, dst, dir)
	p.cloneInto(src, dst)
	p.setattr("mount attributes "+src, dst, attrs, true)
}

// cloneInto opens src with RESOLVE_NO_SYMLINKS and attaches a recursive
// clone of its mount tree at the existing dst (open_tree, move_mount).
func (p *plan) cloneInto(src, dst string) {
	name := "bind " + src
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	p.keep = append(p.keep, how)
	empty := p.cstr("")
	p.add(name, sysOp{nr: unix.SYS_OPENAT2, args: [6]uintptr{atFDCWD, p.cstr(src), uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how)},
		out: regFile})
	p.add(name, sysOp{nr: unix.SYS_OPEN_TREE, args: [6]uintptr{0, empty,
		unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_RECURSIVE | unix.AT_EMPTY_PATH},
		in: [6]uint8{regFile}, out: regTree})
	p.add(name, sysOp{nr: unix.SYS_CLOSE, in: [6]uint8{regFile}})
	p.add(name, sysOp{nr: unix.SYS_MOVE_MOUNT, args: [6]uintptr{0, empty, atFDCWD, p.cstr(dst), unix.MOVE_MOUNT_F_EMPTY_PATH},
		in: [6]uint8{regTree}})
	p.add(name, sysOp{nr: unix.SYS_CLOSE, in: [6]uint8{regTree}})
}

// mountPoint creates dst (a directory, or an empty file and its parents).
func (p *plan) mountPoint(root, dst string, dir bool) {
	if dir {
		p.mkdirAll("mount point "+dst, root, dst)
	} else {
		p.mkdirAll("mount point "+dst, root, dst[:strings.LastIndexByte(dst, '/')])
		p.writeFile("mount point "+dst, dst, nil, unix.O_CREAT|unix.O_WRONLY)
	}
}

// writeFile opens path with flags (mode 0644), writes body and closes it.
func (p *plan) writeFile(name, path string, body []byte, flags int) {
	p.add(name, sysOp{nr: unix.SYS_OPENAT, args: [6]uintptr{atFDCWD, p.cstr(path), uintptr(flags | unix.O_CLOEXEC), 0o644}, out: regFile})
	if len(body) > 0 {
		p.add(name, sysOp{nr: unix.SYS_WRITE, args: [6]uintptr{0, p.bytes(body), uintptr(len(body))}, in: [6]uint8{regFile}})
	}
	p.add(name, sysOp{nr: unix.SYS_CLOSE, in: [6]uint8{regFile}})
}

func (p *plan) symlink(name, target, link string, ok syscall.Errno) {
	p.add(name, sysOp{nr: unix.SYS_SYMLINKAT, args: [6]uintptr{p.cstr(target), atFDCWD, p.cstr(link)}, ok: ok})
}

// atFDCWD is AT_FDCWD as a system call argument.
const atFDCWD = ^uintptr(0) - 99 // -100

// compilePlan turns a job into the setup plan of its PID 1 (notes §3 steps
// 4–9): join the v1 job cgroups, new session, fresh root, pivot, drop every
// privilege, Landlock, seccomp. v1Tasks is the number of v1 cgroup "tasks"
// descriptors at fdV1Tasks.
func compilePlan(j job, jobRoot string, v1Tasks int, dropUID bool) (*plan, error) {
	p := &plan{fdTree: -1, fdGit: -1}
	for fd := fdV1Tasks; fd < fdV1Tasks+v1Tasks; fd++ {
		// A process moving itself skips the global threadgroup lock a
		// write by the supervisor would take (see openV1Tasks).
		p.call("cgroup v1 join", unix.SYS_WRITE, uintptr(fd), p.bytes([]byte("0")), 1)
		p.call("cgroup v1 join", unix.SYS_CLOSE, uintptr(fd))
	}
	p.call("new session", unix.SYS_SETSID)
	// Extra descriptors follow the v1 tasks files, in this order
	// (startPID1): the gate socket, the idmapped candidate tree, the
	// idmapped git directory, the pinned files.
	port, next := 0, fdV1Tasks+v1Tasks
	if j.gate != nil {
		port = j.gate.port
		p.gateListener(next, port)
		next++
	}
	if (j.candidate != nil || j.readWS != "") && dropUID {
		p.fdTree = next
		next++
	}
	if j.git != nil && dropUID {
		p.fdGit = next
		next++
	}
	p.fdPins = map[int]int{}
	for _, pin := range j.pins {
		if !dropUID || testOnlyPinByPath {
			break // an unprivileged supervisor has no pinned mounts (pinTrees)
		}
		p.fdPins[pin.bind] = next
		next++
	}
	if err := p.root(j, jobRoot); err != nil {
		return nil, err
	}
	p.restrict(j.dir, dropUID, port, j.readWS != "")
	return p, nil
}

// restrict plans the privilege drop (notes §3 steps 7–9). Order:
// capabilities and ids while we still may change them, then (after the
// last id change) non-dumpable and the parent-death signal, the working
// directory, no_new_privs, Landlock, seccomp last. gatePort > 0 is the
// agent profile: TCP connect to that port, TCP stream sockets;
// roWorkspace (the read profile) grants only read beneath the workspace.
func (p *plan) restrict(dir string, dropUID bool, gatePort int, roWorkspace bool) {
	for c := uintptr(0); c < 64; c++ {
		// EINVAL past the kernel's last capability.
		p.add("capability bounding set", sysOp{nr: unix.SYS_PRCTL, args: [6]uintptr{unix.PR_CAPBSET_DROP, c}, ok: unix.EINVAL})
	}
	p.call("ambient capabilities", unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL)
	// SECBIT_NOROOT|_LOCKED, SECBIT_KEEP_CAPS_LOCKED,
	// SECBIT_NO_CAP_AMBIENT_RAISE|_LOCKED (linux/securebits.h): uid 0 gains
	// nothing at exec, and none of this can be undone.
	const bits = 1<<0 | 1<<1 | 1<<5 | 1<<6 | 1<<7
	p.call("securebits", unix.SYS_PRCTL, unix.PR_SET_SECUREBITS, bits)
	if dropUID {
		// Switch to nobody with no supplementary groups.
		p.call("setgroups", unix.SYS_SETGROUPS, 0, 0)
		p.call("setresgid", unix.SYS_SETRESGID, nobody, nobody, nobody)
		p.call("setresuid", unix.SYS_SETRESUID, nobody, nobody, nobody)
	}
	p.rearm()
	hdr := &unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := &[2]unix.CapUserData{}
	p.keep = append(p.keep, hdr, data)
	p.call("capabilities", unix.SYS_CAPSET, uintptr(unsafe.Pointer(hdr)), uintptr(unsafe.Pointer(&data[0])))
	p.call("working directory", unix.SYS_CHDIR, p.cstr(dir))
	p.call("no_new_privs", unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1)
	p.landlock(gatePort, roWorkspace)
	f := buildFilter()
	if gatePort > 0 {
		f = buildAgentFilter()
	}
	fp := &unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	p.keep = append(p.keep, f, fp)
	// No TSYNC: the child is single-threaded, and the command it forks
	// inherits the filter.
	p.call("seccomp", unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(fp)))
}

// rearm makes PID 1 non-dumpable and re-arms its parent-death signal after
// the plan's last change of user or group id: a change of effective or
// filesystem uid or gid (setresgid, setresuid when the supervisor is root)
// resets the dumpable flag to fs.suid_dumpable and clears the parent-death
// signal (kernel/cred.c, commit_creds; the later capset and Landlock
// steps keep the ids and add no capability, so they reset neither). Without this a root supervisor's death left the sandbox
// running, and on a host with fs.suid_dumpable=1 the command could read
// PID 1's memory (the supervisor's copy) through /proc/1/mem. The
// supervisor may die before the signal is re-armed; the write of an alive
// record then fails with EPIPE (its read end of the status pipe closes
// before its last thread's children are signalled) and PID 1 exits.
func (p *plan) rearm() {
	p.call("dumpable", unix.SYS_PRCTL, unix.PR_SET_DUMPABLE, 0)
	p.call("parent-death signal", unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL))
	rec := [16]byte{recAlive}
	p.call("supervisor alive", unix.SYS_WRITE, fdStatus, p.bytes(rec[:]), uintptr(len(rec)))
}
