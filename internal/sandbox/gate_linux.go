//go:build linux && amd64

package sandbox

import (
	"fmt"
	"net"
	"os"
	"sync"
	"unsafe"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The agent profile's gate channel (issue 15 scope 2; notes/sandbox.md §3
// step 5, "the one gateway listener created inside" the agent netns).
//
// A socket belongs to the network namespace it was created in, whoever
// holds it later. PID 1, still privileged in its own user namespace and
// before any command runs, brings loopback up, creates a TCP listener on
// 127.0.0.1:<port>, and sends the listening descriptor to the supervisor
// over a socketpair (SCM_RIGHTS), then closes its own copies. The
// supervisor accepts on it from outside the sandbox. So the namespace has
// exactly one reachable endpoint, served by no process inside the sandbox:
// there is no forwarder for the agent to kill, trace or replace, and an
// unprivileged supervisor needs no setns into a namespace it does not own.

// fdGatePass is the descriptor number PID 1 gives the listener before
// sending it: the SCM_RIGHTS message is built before the fork and must
// name a fixed number (below the RLIMIT_NOFILE release sets, above every
// descriptor PID 1 holds).
const fdGatePass = 64

// maxGateConns bounds the gate connections of one job accepted at once.
// Each is a descriptor and a goroutine of the supervisor, outside every
// limit of the sandbox: unbounded, an agent holding thousands (4096
// descriptors per process, times the pids limit) could leave the server
// none for its state or the user's other jobs. Past the bound,
// connections wait in the kernel's backlog (128) and then connect no
// more; an agent runtime keeps a few.
const maxGateConns = 64

// gateListener plans the listener's creation and hand-over; fdGate is
// PID 1's end of the socketpair.
func (p *plan) gateListener(fdGate, port int) {
	ifr, _ := unix.NewIfreq("lo") // "lo" always fits IFNAMSIZ
	ifr.SetUint16(unix.IFF_UP | unix.IFF_RUNNING)
	p.keep = append(p.keep, ifr)
	p.add("gate: loopback up", sysOp{nr: unix.SYS_SOCKET, args: [6]uintptr{unix.AF_INET, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC}, out: regFile})
	p.add("gate: loopback up", sysOp{nr: unix.SYS_IOCTL, args: [6]uintptr{0, unix.SIOCSIFFLAGS, uintptr(unsafe.Pointer(ifr))},
		in: [6]uint8{regFile}})
	p.add("gate: loopback up", sysOp{nr: unix.SYS_CLOSE, in: [6]uint8{regFile}})

	sa := &unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: [4]byte{127, 0, 0, 1}}
	sa.Port = uint16(port>>8) | uint16(port&0xff)<<8 // network byte order
	p.keep = append(p.keep, sa)
	name := fmt.Sprintf("gate: listener 127.0.0.1:%d", port)
	p.add(name, sysOp{nr: unix.SYS_SOCKET, args: [6]uintptr{unix.AF_INET, unix.SOCK_STREAM | unix.SOCK_CLOEXEC}, out: regFile})
	p.add(name, sysOp{nr: unix.SYS_BIND, args: [6]uintptr{0, uintptr(unsafe.Pointer(sa)), unix.SizeofSockaddrInet4},
		in: [6]uint8{regFile}})
	p.add(name, sysOp{nr: unix.SYS_LISTEN, args: [6]uintptr{0, 128}, in: [6]uint8{regFile}})
	p.add(name, sysOp{nr: unix.SYS_DUP3, args: [6]uintptr{0, fdGatePass, unix.O_CLOEXEC}, in: [6]uint8{regFile}})
	p.add(name, sysOp{nr: unix.SYS_CLOSE, in: [6]uint8{regFile}})

	one := []byte{1}
	iov := &unix.Iovec{Base: &one[0], Len: 1}
	rights := unix.UnixRights(fdGatePass)
	msg := &unix.Msghdr{Iov: iov, Iovlen: 1, Control: &rights[0], Controllen: uint64(len(rights))}
	p.keep = append(p.keep, one, iov, rights, msg)
	p.call("gate: hand over the listener", unix.SYS_SENDMSG, uintptr(fdGate), uintptr(unsafe.Pointer(msg)), 0)
	p.call("gate: hand over the listener", unix.SYS_CLOSE, fdGatePass)
	p.call("gate: hand over the listener", unix.SYS_CLOSE, uintptr(fdGate))
}

// landlockGate adds the one network rule: TCP connect to the gate port.
// Binding stays unhandled-and-ungranted (no listener of the agent's own).
func (p *plan) landlockGate(port int) {
	np := &ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: uint64(port)}
	p.keep = append(p.keep, np)
	p.add("landlock: gate port", sysOp{nr: unix.SYS_LANDLOCK_ADD_RULE, args: [6]uintptr{0, ll.RuleTypeNetPort, uintptr(unsafe.Pointer(np))},
		in: [6]uint8{regRuleset}})
}

// gateRelay is the supervisor's side of the channel.
type gateRelay struct {
	child *os.File // PID 1's end, closed once forked
	own   int      // the supervisor's end (a raw descriptor: see close)
	mu    sync.Mutex
	ln    net.Listener
	done  chan struct{}
}

// newGateRelay creates the socketpair.
func newGateRelay() (*gateRelay, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, unavailable("gate", "a socketpair for the gate channel", err)
	}
	return &gateRelay{child: os.NewFile(uintptr(fds[1]), "gate-child"), own: fds[0],
		done: make(chan struct{})}, nil
}

// receive waits for the listener PID 1 sends and hands it to serve. It
// returns without calling serve when PID 1 ended first (end of file: a
// setup step failed, which the status pipe reports).
func (g *gateRelay) receive(serve func(net.Listener)) {
	defer close(g.done)
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(g.own, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil || n != 1 {
		return
	}
	fd, ok := onlyRight(oob[:oobn])
	if !ok {
		return
	}
	f := os.NewFile(uintptr(fd), "gate-listener")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return
	}
	lim := &limitListener{Listener: ln, slots: make(chan struct{}, maxGateConns), done: make(chan struct{})}
	g.mu.Lock()
	g.ln = lim
	g.mu.Unlock()
	go serve(lim)
}

// limitListener accepts at most cap(slots) connections that are open at
// once ([maxGateConns]); Accept waits for a slot before it accepts.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{} // closed by Close: a waiting Accept returns
	once  sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when closed (once, however often).
type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// onlyRight returns the single descriptor of a control message, closing
// any others.
func onlyRight(oob []byte) (int, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) != 1 {
		return -1, false
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, false
	}
	return fds[0], true
}

// close ends the channel: the listener (the caller's Serve returns) and,
// if PID 1 never sent it, the wait for it. A descriptor closed under a
// blocked recvmsg does not wake it; shutdown does, and the descriptor is
// closed only after receive is done with it (never a reused number).
// Call it exactly once, after receive was started.
func (g *gateRelay) close() {
	_ = unix.Shutdown(g.own, unix.SHUT_RDWR)
	<-g.done
	unix.Close(g.own)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ln != nil {
		g.ln.Close()
	}
}
