//go:build linux && amd64

package sandbox

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// pid1 is the started sandbox PID 1 (fork_linux.go) and its pipes.
type pid1 struct {
	pid     int
	pidfd   int
	statusR *os.File
	syncW   *os.File
	outR    [2]*os.File
	stdinW  *os.File // the command's stdin pipe (AgentSpec.Stdin); nil = /dev/null
	plan    *plan
	gate    *gateRelay // agent profile; nil for a task run
	// released is closed when release returns: PID 1 is not reaped
	// before, so its pid cannot be reused while release writes to
	// /proc/<pid> and prlimits it.
	released chan struct{}
	// done receives PID 1's wait status once, from the goroutine that
	// forked it.
	done chan syscall.WaitStatus
	// pins watches the pinned files from their check to the run's end
	// (nil without pins); pinErr is the first change it found.
	pins   *pinWatch
	pinErr error
	// execd is closed when PID 1 reports that the command has exec'd
	// (recExec); statusEnd when its status pipe ended, statusBuf then
	// holding every record read (readStatus).
	execd     chan struct{}
	statusEnd chan struct{}
	statusBuf []byte
}

// childFiles are the supervisor's ends of what the child gets as its
// descriptors 0…, and the pipe ends the supervisor keeps.
type childFiles struct {
	child []*os.File // stdin, stdout, stderr, status, sync, v1 tasks...
	keep  []*os.File // statusR, syncW, outR, errR[, stdinW]
	// stdinW is the write end of the command's stdin pipe, or nil.
	stdinW *os.File
}

func (c *childFiles) close(all bool) {
	for _, f := range c.child {
		f.Close()
	}
	if all {
		for _, f := range c.keep {
			f.Close()
		}
	}
}

// openChildFiles opens PID 1's stdin (/dev/null, or with pipeIn the read
// end of a pipe whose write end is stdinW) and its four pipes; it owns
// tasks from here on (closed on failure, else with the child's ends).
func openChildFiles(tasks []*os.File, pipeIn bool) (*childFiles, error) {
	c := &childFiles{child: tasks}
	var in *os.File
	var err error
	if pipeIn {
		in, c.stdinW, err = os.Pipe()
	} else {
		in, err = os.Open(os.DevNull)
	}
	if err != nil {
		c.close(true)
		return nil, fault.Wrap(fault.ProcessError, "sandbox.pipe", "cannot open the command's stdin", err)
	}
	if c.stdinW != nil {
		c.keep = append(c.keep, c.stdinW) // closed on a later failure
	}
	var ends [4][2]*os.File // out, err, status, sync: {read, write}
	for i := range ends {
		if ends[i][0], ends[i][1], err = os.Pipe(); err != nil {
			c.child = append(c.child, in)
			c.close(true)
			return nil, fault.Wrap(fault.ProcessError, "sandbox.pipe", "cannot create pipes", err)
		}
		c.keep = append(c.keep, ends[i][0], ends[i][1]) // closed on a later failure
	}
	c.child = append([]*os.File{in, ends[0][1], ends[1][1], ends[2][1], ends[3][0]}, tasks...)
	c.keep = []*os.File{ends[2][0], ends[3][1], ends[0][0], ends[1][0]}
	if c.stdinW != nil {
		c.keep = append(c.keep, c.stdinW)
	}
	return c, nil
}

// startPID1 forks the sandbox's PID 1 in fresh namespaces, directly inside
// the job's v2 cgroup (CLONE_INTO_CGROUP), writes its id maps and rlimits,
// and releases it to run the plan. The fork happens on a goroutine locked
// to its OS thread for PID 1's lifetime because the parent-death signal
// fires when the creating thread exits (notes §3 step 4).
func startPID1(j job, root string, cg *jobCgroups) (*pid1, error) {
	tasks, err := cg.openV1Tasks()
	if err != nil {
		return nil, err
	}
	closeTasks := func() {
		for _, f := range tasks {
			f.Close()
		}
	}
	if len(tasks) > maxChildFds-fdV1Tasks-3-maxPins {
		closeTasks()
		return nil, unavailable("cgroup_join", "at most 8 v1 cgroup hierarchies", fmt.Errorf("%d", len(tasks)))
	}
	pl, err := compilePlan(j, root, len(tasks), os.Geteuid() == 0)
	if err != nil {
		closeTasks()
		return nil, err
	}
	var gate *gateRelay
	if j.gate != nil {
		if gate, err = newGateRelay(); err != nil {
			closeTasks()
			return nil, err
		}
		// From here the relay ends when PID 1's end closes: with PID 1,
		// or below when the fork fails (the child files are closed).
		go gate.receive(j.gate.serve)
		tasks = append(tasks, gate.child)
	}
	abandon := func() {
		if gate != nil {
			gate.close()
		}
	}
	// The mount trees PID 1 attaches, in the plan's fd order: the
	// candidate's overlay, the read projection, the git view.
	var trees []func() (*os.File, error)
	if j.candidate != nil {
		trees = append(trees, func() (*os.File, error) { return prepareCandidate(j.candidate, root) })
	}
	if j.readWS != "" && os.Geteuid() == 0 {
		trees = append(trees, func() (*os.File, error) { return idmappedTree(j.readWS) })
	}
	if j.git != nil {
		trees = append(trees, func() (*os.File, error) { return prepareGit(j.git, root) })
	}
	for _, open := range trees {
		tree, err := open()
		if err != nil {
			closeTasks()
			abandon()
			return nil, err
		}
		if tree != nil {
			tasks = append(tasks, tree)
		}
	}
	pins, watch, err := pinTrees(j.pins)
	if err != nil {
		closeTasks()
		abandon()
		return nil, err
	}
	tasks = append(tasks, pins...)
	abandonGate := abandon
	abandon = func() { abandonGate(); watch.close() }
	files, err := openChildFiles(tasks, j.gate != nil && j.gate.stdin != nil)
	if err != nil {
		abandon()
		return nil, err
	}
	defer files.close(false)
	spec, release, err := newForkSpec(j, pl, files, cg)
	defer release()
	if err != nil {
		files.close(true)
		abandon()
		return nil, err
	}
	p := &pid1{pidfd: -1, plan: pl, gate: gate, stdinW: files.stdinW, statusR: files.keep[0], syncW: files.keep[1], outR: [2]*os.File{files.keep[2], files.keep[3]},
		done: make(chan syscall.WaitStatus, 1), released: make(chan struct{}), pins: watch,
		execd: make(chan struct{}), statusEnd: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with PID 1's wait
		pid, e := forkChild(spec)
		runtime.KeepAlive(spec)
		runtime.KeepAlive(pl)
		if e != 0 {
			started <- e
			return
		}
		p.pid, p.pidfd = int(pid), int(spec.pidfd)
		started <- nil
		<-p.released
		var ws syscall.WaitStatus
		for {
			if _, err := syscall.Wait4(int(pid), &ws, 0, nil); err != syscall.EINTR {
				break
			}
		}
		p.done <- ws
	}()
	if err := <-started; err != nil {
		files.close(true)
		abandon()
		return nil, unavailable("namespaces", "user, mount, PID, network, IPC, UTS and cgroup namespaces", err)
	}
	go p.readStatus()
	return p, nil
}

// maxStatus bounds the status records kept (PID 1 writes at most an
// alive, an exec and an exit or setup record).
const maxStatus = 8 * 16

// readStatus reads PID 1's status records as they come, closing execd at
// the exec record (so the pins are compared again while the command
// runs), until the pipe ends (PID 1 exited) or maxStatus.
func (p *pid1) readStatus() {
	defer close(p.statusEnd)
	var rec [16]byte
	for len(p.statusBuf) < maxStatus {
		if _, err := io.ReadFull(p.statusR, rec[:]); err != nil {
			return
		}
		p.statusBuf = append(p.statusBuf, rec[:]...)
		if le32(rec[:]) == recExec && !p.sawExec() {
			close(p.execd)
		}
	}
}

func (p *pid1) sawExec() bool {
	select {
	case <-p.execd:
		return true
	default:
		return false
	}
}

// newForkSpec fills the child's input. The returned func closes the
// high-numbered duplicates the child dup3s from (call it after the fork).
func newForkSpec(j job, pl *plan, files *childFiles, cg *jobCgroups) (*forkSpec, func(), error) {
	s := &forkSpec{ops: pl.ops, nfds: len(files.child), wipe: argvBlock()}
	var dups []int
	release := func() {
		for _, fd := range dups {
			unix.Close(fd)
		}
	}
	// Sources above every target, so the child's dup3 sequence never
	// overwrites a source it still needs.
	for i, f := range files.child {
		fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 64)
		if err != nil {
			return nil, release, fault.Wrap(fault.ProcessError, "sandbox.pipe", "cannot duplicate descriptors", err)
		}
		dups = append(dups, fd)
		s.fds[i] = uintptr(fd)
		if testOnlyBadChildFd && i == 0 {
			s.fds[i] = 1 << 30 // never open: dup3 fails with EBADF
		}
		if i >= fdStatus {
			s.cloex[i] = unix.O_CLOEXEC
		}
	}
	cgfd, err := unix.Open(cg.leaf, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, release, unavailable("cgroup", "an openable job cgroup", err)
	}
	dups = append(dups, cgfd)
	if s.path, err = syscall.BytePtrFromString(j.path); err == nil {
		if s.argv, err = syscall.SlicePtrFromStrings(append([]string{j.path}, j.args...)); err == nil {
			s.envv, err = syscall.SlicePtrFromStrings(j.env)
		}
	}
	if err != nil {
		return nil, release, invalid("sandbox.command", "the command or its environment contains a NUL byte")
	}
	s.clone = cloneArgs{
		flags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWIPC |
			unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_PIDFD | unix.CLONE_INTO_CGROUP,
		pidFD: uint64(uintptr(unsafe.Pointer(&s.pidfd))), exitSignal: uint64(syscall.SIGCHLD), cgroup: uint64(cgfd),
	}
	return s, release, nil
}

// release writes PID 1's id maps and outside limits, then lets it run its
// plan. Nothing in the sandbox has run before this returns.
func (p *pid1) release(lim Limits) error {
	defer close(p.released)
	defer p.syncW.Close()
	// The window from the pins' checks to the fork: a write in place
	// there refuses before anything runs.
	if err := p.pins.verify(pinAtRelease); err != nil {
		return err
	}
	if testOnlyBeforeRelease != nil {
		testOnlyBeforeRelease()
	}
	if err := writeIDMaps(p.pid); err != nil {
		return unavailable("namespaces", "a writable user namespace id map", err)
	}
	// RLIMIT_SIGPENDING bounds the run's share of the pending signals
	// the host counts per user and charges to the supervisor's user (the
	// user namespace's owner): inherited, it let a command queue the
	// user's whole allowance, and the user's timer_create and sigqueue
	// failed until the run ended (see userNSLimits for inotify).
	rl := []struct {
		res int
		v   uint64
	}{{unix.RLIMIT_FSIZE, uint64(lim.FileSize)}, {unix.RLIMIT_CORE, 0}, {unix.RLIMIT_NOFILE, 4096}, {unix.RLIMIT_SIGPENDING, 1024}}
	for _, r := range rl {
		if err := unix.Prlimit(p.pid, r.res, &unix.Rlimit{Cur: r.v, Max: r.v}, nil); err != nil {
			return unavailable("rlimit", "prlimit on the sandbox", err)
		}
	}
	if _, err := p.syncW.Write([]byte{1}); err != nil {
		return unavailable("release", "a live PID 1 at release", err)
	}
	return nil
}

// writeIDMaps maps our uid and gid to 0 in the namespace, plus nobody when
// we are root (the command then runs as nobody). Root may keep setgroups so
// the command can drop its supplementary groups; an unprivileged
// supervisor must deny it to write gid_map.
func writeIDMaps(pid int) error {
	uid, gid := os.Geteuid(), os.Getegid()
	line := func(id int) string {
		m := fmt.Sprintf("0 %d 1\n", id)
		if id == 0 {
			m += fmt.Sprintf("%d %d 1\n", nobody, nobody)
		}
		return m
	}
	dir := fmt.Sprintf("/proc/%d/", pid)
	setgroups := "deny"
	if uid == 0 {
		setgroups = "allow"
	}
	for _, w := range [][2]string{{"setgroups", setgroups}, {"gid_map", line(gid)}, {"uid_map", line(uid)}} {
		if err := writeFile(dir+w[0], w[1]); err != nil {
			return err
		}
	}
	return nil
}

// status reads PID 1's reports: a setup failure, or the command's wait
// status (nil when PID 1 died without one).
func (p *pid1) status() *childStatus {
	pl := p.plan
	<-p.statusEnd
	defer p.statusR.Close()
	b := p.statusBuf
	var st *childStatus
	for ; len(b) >= 16; b = b[16:] {
		kind, step, errno, ws := le32(b), le32(b[4:]), le32(b[8:]), syscall.WaitStatus(le32(b[12:]))
		switch {
		case kind == recSetup && (st == nil || st.Reason == ""):
			// A setup failure wins over the exit record that follows it.
			st = &childStatus{Reason: "setup", Missing: stepName(pl, step), Error: syscall.Errno(errno).Error()}
		case kind == recExit && st == nil:
			st = &childStatus{Exited: ws.Exited(), Code: ws.ExitStatus()}
			if ws.Signaled() {
				st.Signal = int(ws.Signal())
			}
		}
	}
	return st
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

func stepName(pl *plan, step uint32) string {
	switch {
	case int(step) < len(pl.names):
		return pl.names[step]
	case step == stepExec:
		return "exec"
	case step == stepFork:
		return "fork"
	case step == stepRelease:
		return "release"
	case step == stepWait:
		return "wait"
	}
	return "sandbox setup"
}

// kill ends the whole tree: cgroup.kill, plus SIGKILL to PID 1 through its
// pidfd (either alone suffices; both are cheap).
func (p *pid1) kill(cg *jobCgroups) {
	if !testOnlyBreakKill {
		_ = cg.kill()
		if p.pidfd >= 0 {
			_ = unix.PidfdSendSignal(p.pidfd, unix.SIGKILL, nil, 0)
		}
	}
}

// argvBlock is this process's argument block as the kernel reports it
// (/proc/self/stat arg_start, arg_end), when os.Args[0] still points at
// its start; nil otherwise. PID 1 zeroes its copy.
var argvBlock = sync.OnceValue(func() []byte {
	b, err := os.ReadFile("/proc/self/stat")
	i := bytes.LastIndexByte(b, ')')
	if err != nil || i < 0 || len(os.Args) == 0 || os.Args[0] == "" {
		return nil
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 47 {
		return nil
	}
	start, err1 := strconv.ParseUint(f[45], 10, 64)
	end, err2 := strconv.ParseUint(f[46], 10, 64)
	p := unsafe.StringData(os.Args[0])
	if err1 != nil || err2 != nil || uint64(uintptr(unsafe.Pointer(p))) != start || end <= start || end-start > 1<<20 {
		return nil
	}
	return unsafe.Slice(p, end-start)
})

// closeAll closes the supervisor's pipe ends and PID 1's pidfd (after
// PID 1 has been reaped).
func (p *pid1) closeAll() {
	if p.gate != nil {
		p.gate.close()
	}
	for _, f := range []*os.File{p.statusR, p.syncW, p.outR[0], p.outR[1]} {
		f.Close()
	}
	if p.stdinW != nil {
		p.stdinW.Close()
	}
	p.pins.close()
	if p.pidfd >= 0 {
		unix.Close(p.pidfd)
		p.pidfd = -1
	}
}
