//go:build linux && amd64

package sandbox

import (
	"testing"

	"golang.org/x/sys/unix"
)

// runBPF interprets the classic-BPF subset buildFilter emits over one
// struct seccomp_data (nr, arch, ip, args): the suggested fix, a host-
// independent check of the foreign-ABI arms.
func runBPF(t *testing.T, p prog, nr, arch uint32, args [6]uint64) uint32 {
	data := make([]byte, 64)
	le := func(off int, v uint32) {
		data[off], data[off+1], data[off+2], data[off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	le(0, nr)
	le(4, arch)
	for i, a := range args {
		le(16+8*i, uint32(a))
		le(20+8*i, uint32(a>>32))
	}
	var A uint32
	for pc := 0; pc < len(p); pc++ {
		in := p[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			o := in.K
			A = uint32(data[o]) | uint32(data[o+1])<<8 | uint32(data[o+2])<<16 | uint32(data[o+3])<<24
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			A &= in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K,
			unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K:
			var ok bool
			switch in.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				ok = A == in.K
			case unix.BPF_JSET:
				ok = A&in.K != 0
			case unix.BPF_JGE:
				ok = A >= in.K
			case unix.BPF_JGT:
				ok = A > in.K
			}
			if ok {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		default:
			t.Fatalf("unhandled BPF op %#x at %d", in.Code, pc)
		}
	}
	t.Fatal("fell off the program")
	return 0
}

// TestFilterKillsForeignABIsOnAnyHost: the foreign-ABI arms of the filter,
// checked without the kernel, so a host that lacks int 0x80 (where the live
// ia32 probe can only find the gate absent) still proves the arch check
// kills ia32 calls; a mutation of the x32 arm is caught too.
func TestFilterKillsForeignABIsOnAnyHost(t *testing.T) {
	const auditArchI386 = 0x40000003
	p := buildFilter()
	for _, c := range []struct {
		name     string
		nr, arch uint32
	}{
		{"ia32 socket", 359, auditArchI386},
		{"ia32 getpid", 20, auditArchI386},
		{"x32 getpid", x32SyscallBit | unix.SYS_GETPID, auditArchX8664},
		{"x32 socket", x32SyscallBit | unix.SYS_SOCKET, auditArchX8664},
	} {
		if got := runBPF(t, p, c.nr, c.arch, [6]uint64{unix.AF_UNIX}); got != retKillProcess {
			t.Errorf("%s: filter returns %#x, want KILL_PROCESS", c.name, got)
		}
	}
	if got := runBPF(t, p, unix.SYS_GETPID, auditArchX8664, [6]uint64{}); got != retAllow {
		t.Errorf("x86_64 getpid: %#x, want ALLOW", got)
	}
	mut := append(prog{}, p...)
	mut[5].K = retAllow // the x32 arm turned into ALLOW
	if got := runBPF(t, mut, x32SyscallBit|unix.SYS_GETPID, auditArchX8664, [6]uint64{}); got == retKillProcess {
		t.Errorf("mutation not detected")
	} else {
		t.Logf("x32 arm mutated to ALLOW: x32 getpid -> %#x (caught on any host)", got)
	}
}

// TestAgentFilterSockets: the agent filter admits TCP stream sockets (the
// runtime's SOCK_CLOEXEC and SOCK_NONBLOCK masked) and nothing else that
// the task filter refuses: no UDP (DNS), MPTCP, raw or packet sockets, no
// AF_INET socketpair; the task filter still refuses every AF_INET socket.
func TestAgentFilterSockets(t *testing.T) {
	const mptcp = 262
	eperm := retErrno | uint32(unix.EPERM)
	stream := uint64(unix.SOCK_STREAM | unix.SOCK_CLOEXEC)
	for _, c := range []struct {
		name       string
		nr         uint32
		args       [6]uint64
		agent, tsk uint32
	}{
		{"inet stream", unix.SYS_SOCKET, [6]uint64{unix.AF_INET, stream, 0}, retAllow, eperm},
		{"inet stream nonblock tcp", unix.SYS_SOCKET, [6]uint64{unix.AF_INET, stream | unix.SOCK_NONBLOCK, unix.IPPROTO_TCP}, retAllow, eperm},
		{"inet6 stream", unix.SYS_SOCKET, [6]uint64{unix.AF_INET6, stream, 0}, retAllow, eperm},
		{"inet dgram", unix.SYS_SOCKET, [6]uint64{unix.AF_INET, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, 0}, eperm, eperm},
		{"inet6 dgram", unix.SYS_SOCKET, [6]uint64{unix.AF_INET6, unix.SOCK_DGRAM, unix.IPPROTO_UDP}, eperm, eperm},
		{"inet raw", unix.SYS_SOCKET, [6]uint64{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP}, eperm, eperm},
		{"mptcp", unix.SYS_SOCKET, [6]uint64{unix.AF_INET, stream, mptcp}, eperm, eperm},
		{"packet", unix.SYS_SOCKET, [6]uint64{unix.AF_PACKET, unix.SOCK_RAW, 0}, eperm, eperm},
		{"vsock", unix.SYS_SOCKET, [6]uint64{unix.AF_VSOCK, unix.SOCK_STREAM, 0}, eperm, eperm},
		{"netlink audit", unix.SYS_SOCKET, [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT}, eperm, eperm},
		{"netlink route", unix.SYS_SOCKET, [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE}, retAllow, retAllow},
		{"unix", unix.SYS_SOCKET, [6]uint64{unix.AF_UNIX, stream, 0}, retAllow, retAllow},
		{"socketpair inet", unix.SYS_SOCKETPAIR, [6]uint64{unix.AF_INET, stream, 0}, eperm, eperm},
		{"inet stream, high word set", unix.SYS_SOCKET, [6]uint64{unix.AF_INET | 1<<32, stream, 0}, retAllow, eperm},
	} {
		got := [2]uint32{runBPF(t, buildAgentFilter(), c.nr, auditArchX8664, c.args), runBPF(t, buildFilter(), c.nr, auditArchX8664, c.args)}
		if want := [2]uint32{c.agent, c.tsk}; got != want {
			t.Errorf("%s: agent, task filter = %#x, want %#x", c.name, got, want)
		}
	}
}
