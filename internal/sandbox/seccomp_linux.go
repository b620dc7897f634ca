//go:build linux && amd64

package sandbox

import (
	"crypto/sha256"
	"encoding/binary"
	"maps"
	"slices"

	"golang.org/x/sys/unix"
)

// Seccomp filter for the task sandbox (notes/sandbox.md §3 step 9, §6).
//
// Order matters and follows the advisories in notes §6: the architecture
// is checked first and anything that is not x86_64 (ia32 int 0x80) is
// killed; x32 numbers (bit 30) are killed next; then argument checks on the
// low 32-bit word (the kernel truncates int arguments, so TIOCSTI|1<<32 must
// match); then the allowlist. Numbers outside the allowlist fail with EPERM,
// numbers past the newest syscall this table knows fail with ENOSYS so libc
// fallbacks work.

const (
	auditArchX8664 = 0xc000003e
	x32SyscallBit  = 0x40000000

	retKillProcess = 0x80000000
	retErrno       = 0x00050000
	retAllow       = 0x7fff0000

	offNr   = 0
	offArch = 4
	// offArgLo returns the offset of the low word of argument i
	// (struct seccomp_data, little endian).
)

func offArgLo(i int) uint32 { return 16 + 8*uint32(i) }

// lastKnownSyscall is the newest x86_64 syscall number in this table
// (469 file_setattr, Linux 6.17). Newer numbers get ENOSYS.
const lastKnownSyscall = 469

// deniedSyscalls lists x86_64 syscalls the child may not make: namespace
// and mount control, tracing and cross-process memory, io_uring (no
// socket() check applies to it), BPF/perf, keyrings, module/kexec, handle
// opens, host clock/identity/power control and legacy unimplemented entries.
var deniedSyscalls = map[uint32]string{
	101: "ptrace", 103: "syslog", 134: "uselib", 135: "personality", 153: "vhangup",
	154: "modify_ldt", 155: "pivot_root", 156: "_sysctl", 159: "adjtimex", 161: "chroot",
	163: "acct", 164: "settimeofday", 165: "mount", 166: "umount2", 167: "swapon",
	168: "swapoff", 169: "reboot", 170: "sethostname", 171: "setdomainname", 172: "iopl",
	173: "ioperm", 174: "create_module", 175: "init_module", 176: "delete_module",
	177: "get_kernel_syms", 178: "query_module", 179: "quotactl", 180: "nfsservctl",
	181: "getpmsg", 182: "putpmsg", 183: "afs_syscall", 184: "tuxcall", 185: "security",
	212: "lookup_dcookie", 227: "clock_settime", 236: "vserver", 246: "kexec_load",
	248: "add_key", 249: "request_key", 250: "keyctl", 272: "unshare",
	298: "perf_event_open", 300: "fanotify_init", 303: "name_to_handle_at",
	304: "open_by_handle_at", 305: "clock_adjtime", 308: "setns", 310: "process_vm_readv",
	311: "process_vm_writev", 312: "kcmp", 313: "finit_module", 320: "kexec_file_load",
	321: "bpf", 323: "userfaultfd", 425: "io_uring_setup", 426: "io_uring_enter",
	427: "io_uring_register", 428: "open_tree", 429: "move_mount", 430: "fsopen",
	431: "fsconfig", 432: "fsmount", 433: "fspick", 438: "pidfd_getfd",
	442: "mount_setattr", 443: "quotactl_fd", 460: "lsm_set_self_attr", 467: "open_tree_attr",
}

// Syscalls with argument checks, and clone3 (its flags live in memory the
// filter cannot read, so it returns ENOSYS and libc falls back to clone).
const (
	sysIoctl      = 16
	sysSocket     = 41
	sysSocketpair = 53
	sysClone      = 56
	sysClone3     = 435
	sysFallocate  = 285
)

// nsCloneFlags may not be passed to clone (nested namespaces, notes test 15).
const nsCloneFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// allowedRanges are the numbers that exist in the x86_64 table.
var allowedRanges = [][2]uint32{{0, 335}, {424, lastKnownSyscall}}

type prog []unix.SockFilter

func (p *prog) stmt(code uint16, k uint32) { *p = append(*p, unix.SockFilter{Code: code, K: k}) }
func (p *prog) jump(code uint16, k uint32, jt, jf uint8) {
	*p = append(*p, unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k})
}
func (p *prog) ret(k uint32) { p.stmt(unix.BPF_RET|unix.BPF_K, k) }

// ldArg loads the low word of argument i.
func (p *prog) ldArg(i int) { p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArgLo(i)) }

// ifEq emits "if A == k { ret r }".
func (p *prog) ifEq(k, r uint32) {
	p.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, k, 0, 1)
	p.ret(r)
}

// buildFilter returns the task sandbox's filter program.
func buildFilter() prog { return buildFilterFor(false) }

// buildAgentFilter returns the agent profile's filter: the task filter
// plus TCP stream sockets (AF_INET/AF_INET6, SOCK_STREAM, protocol 0 or
// IPPROTO_TCP), the one kind the gate channel needs. Which ports such a
// socket may reach is Landlock's rule and the network namespace's
// business; MPTCP, UDP (DNS) and raw sockets stay EPERM.
func buildAgentFilter() prog { return buildFilterFor(true) }

func buildFilterFor(inet bool) prog {
	var p prog
	eperm := retErrno | uint32(unix.EPERM)
	p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch)
	p.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, auditArchX8664, 1, 0)
	p.ret(retKillProcess)
	p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr)
	p.jump(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, x32SyscallBit, 0, 1)
	p.ret(retKillProcess)
	p.argChecks(eperm, inet)
	p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr)
	p.ifEq(sysClone3, retErrno|uint32(unix.ENOSYS))
	// fallocate reserves any number of blocks of host disk in one call
	// (with FALLOC_FL_KEEP_SIZE past RLIMIT_FSIZE too), faster than the
	// disk watch polls ([Limits.Disk]). EOPNOTSUPP is what a file system
	// without it answers: posix_fallocate and the Go linker then write
	// the blocks, at a pace the watch keeps up with.
	p.ifEq(sysFallocate, retErrno|uint32(unix.EOPNOTSUPP))
	for _, nr := range slices.Sorted(maps.Keys(deniedSyscalls)) {
		p.ifEq(nr, eperm)
	}
	for _, r := range allowedRanges {
		// if lo <= nr <= hi { allow }
		p.jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, r[0], 0, 2)
		p.jump(unix.BPF_JMP|unix.BPF_JGT|unix.BPF_K, r[1], 1, 0)
		p.ret(retAllow)
	}
	p.jump(unix.BPF_JMP|unix.BPF_JGT|unix.BPF_K, lastKnownSyscall, 0, 1)
	p.ret(retErrno | uint32(unix.ENOSYS))
	p.ret(eperm)
	return p
}

// argChecks emits the argument filters; A holds the syscall number on entry
// and on fall-through. With inet, socket (not socketpair) also admits TCP
// stream sockets.
func (p *prog) argChecks(eperm uint32, inet bool) {
	ldNr := func() { p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr) }
	// ioctl: TIOCSTI and TIOCLINUX inject input into a terminal.
	p.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, sysIoctl, 0, 5)
	p.ldArg(1)
	p.ifEq(unix.TIOCSTI, eperm)
	p.ifEq(unix.TIOCLINUX, eperm)
	ldNr()
	// clone: no namespace flags.
	p.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, sysClone, 0, 4)
	p.ldArg(0)
	p.jump(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, nsCloneFlags, 0, 1)
	p.ret(eperm)
	ldNr()
	// socket, socketpair: AF_UNIX, and AF_NETLINK with NETLINK_ROUTE only
	// (zero network: no AF_INET/6, MPTCP, packet, vsock, alg, bluetooth).
	for _, nr := range []uint32{sysSocket, sysSocketpair} {
		body := socketChecks(eperm, inet && nr == sysSocket)
		p.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, nr, 0, uint8(len(body)))
		*p = append(*p, body...)
	}
}

// socketChecks is the body of one socket-family check; every path returns.
// Offsets are counted by hand: the comments give each instruction's index.
func socketChecks(eperm uint32, inet bool) prog {
	var b prog
	notNetlink := uint8(3) // to the final EPERM (index 7)
	if inet {
		notNetlink = 4 // to the AF_INET check (index 8)
	}
	b.ldArg(0)                                                                   // 0
	b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.AF_UNIX, 0, 1)             // 1
	b.ret(retAllow)                                                              // 2
	b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.AF_NETLINK, 0, notNetlink) // 3
	b.ldArg(2)                                                                   // 4
	b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.NETLINK_ROUTE, 0, 1)       // 5
	b.ret(retAllow)                                                              // 6
	b.ret(eperm)                                                                 // 7
	if !inet {
		return b
	}
	// A is still argument 0 here. The runtime adds SOCK_CLOEXEC (and
	// callers SOCK_NONBLOCK): mask them before comparing the type
	// (notes/sandbox.md §5, "SOCK_DGRAM vs a rule on type").
	b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.AF_INET, 1, 0)                            // 8
	b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.AF_INET6, 0, 7)                           // 9 → 17
	b.ldArg(1)                                                                                  // 10
	b.stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, ^uint32(unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK)) // 11
	b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.SOCK_STREAM, 0, 4)                        // 12 → 17
	b.ldArg(2)                                                                                  // 13
	b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, 0, 1, 0)                                       // 14 → 16
	b.jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.IPPROTO_TCP, 0, 1)                        // 15
	b.ret(retAllow)                                                                             // 16
	b.ret(eperm)                                                                                // 17
	return b
}

// filterDigest hashes the program (part of the policy digest).
func filterDigest() [32]byte { return progDigest(buildFilter()) }

func progDigest(p prog) [32]byte {
	h := sha256.New()
	for _, f := range p {
		_ = binary.Write(h, binary.LittleEndian, f)
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}
