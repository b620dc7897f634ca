//go:build linux && amd64

package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// emptyTimeout bounds how long the supervisor waits for the job's cgroup to
// empty after a kill before the run is classified uncertain (R-073: 2 s).
const emptyTimeout = 2 * time.Second

// testOnlyBreakKill makes cgroup.kill a no-op so tests can prove that an
// unverified tree ends "uncertain".
var testOnlyBreakKill bool

// runJob runs an admitted job and returns its receipt.
func (s *Sandbox) runJob(ctx context.Context, j job, digest string) (Receipt, error) {
	start := time.Now()
	h, err := readHost()
	if err != nil {
		return Receipt{}, err
	}
	if err := s.checkHost(h); err != nil {
		return Receipt{}, err
	}
	layout, err := detectCgroups(s.cfg.CgroupRoot)
	if err != nil {
		return Receipt{}, err
	}
	id := j.id
	if id == "" {
		id = newJobID()
	}
	rec := Receipt{JobID: id, Profile: ProfileTask, PolicyDigest: policyDigest(), BinaryDigest: digest,
		Kernel: h.kernel(layout.source), Command: append([]string{j.path}, j.args...),
		EnvNames: envNames(j.env), EnvRemoved: j.envRemoved, Requested: j.limits, Started: start.UTC()}
	root, err := s.makeJobRoot(id, j)
	if root != "" {
		defer os.RemoveAll(root)
	}
	if err != nil {
		return Receipt{}, err
	}
	cg, err := layout.create(id, j.limits)
	if err != nil {
		return Receipt{}, err
	}
	defer cg.remove()
	if err := s.supervise(ctx, j, root, cg, &rec, start); err != nil {
		return Receipt{}, err
	}
	rec.Artifacts, rec.ArtifactsRejected, err = collectArtifacts(root, j.artifactsTo)
	if err != nil {
		return rec, err
	}
	rec.TotalMS = ms(time.Since(start))
	return rec, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// helper is one started helper process and its pipes.
type helper struct {
	cmd      *exec.Cmd
	policyW  *os.File
	statusR  *os.File
	outR     [2]*os.File
	done     chan error
	pidfd    int
	childEnd []*os.File
	v1Tasks  int // v1 tasks files passed from fdV1Tasks on
}

// startHelper re-executes this binary as the helper in fresh namespaces,
// directly inside the job's v2 cgroup (CLONE_INTO_CGROUP). It starts from a
// goroutine locked to its OS thread for the helper's lifetime because
// Pdeathsig fires when the creating thread exits (notes §3 step 4).
func startHelper(root string, cg *jobCgroups) (*helper, error) {
	h := &helper{done: make(chan error, 1), pidfd: -1}
	var err error
	files := make([]*os.File, 4)
	pairs := []struct{ r, w **os.File }{{&files[0], &h.policyW}, {&h.statusR, &files[1]}, {&h.outR[0], &files[2]}, {&h.outR[1], &files[3]}}
	for _, p := range pairs {
		if *p.r, *p.w, err = os.Pipe(); err != nil {
			return nil, fault.Wrap(fault.ProcessError, "sandbox.pipe", "cannot create pipes", err)
		}
	}
	h.childEnd = files
	tasks, err := cg.openV1Tasks()
	if err != nil {
		h.closeAll()
		return nil, err
	}
	h.childEnd, h.v1Tasks = append(files, tasks...), len(tasks)
	cgfd, err := unix.Open(cg.leaf, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		h.closeAll()
		return nil, unavailable("cgroup", "an openable job cgroup", err)
	}
	defer unix.Close(cgfd)
	// fds 3 and 4 are the policy and status pipes, 5… the v1 tasks files.
	h.cmd = &exec.Cmd{Path: "/proc/self/exe", Args: []string{helperArg0}, Env: []string{}, Dir: root,
		Stdout: files[2], Stderr: files[3], ExtraFiles: append(files[:2:2], tasks...), SysProcAttr: helperAttr(cgfd, &h.pidfd)}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the helper's wait
		if err := h.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		h.done <- h.cmd.Wait()
	}()
	if err := <-started; err != nil {
		h.closeAll()
		return nil, unavailable("namespaces", "user, mount, PID, network, IPC, UTS and cgroup namespaces", err)
	}
	for _, f := range h.childEnd {
		f.Close()
	}
	return h, nil
}

func helperAttr(cgfd int, pidfd *int) *syscall.SysProcAttr {
	uid, gid := os.Geteuid(), os.Getegid()
	maps := func(id int) []syscall.SysProcIDMap {
		m := []syscall.SysProcIDMap{{ContainerID: 0, HostID: id, Size: 1}}
		if id == 0 {
			m = append(m, syscall.SysProcIDMap{ContainerID: nobody, HostID: nobody, Size: 1})
		}
		return m
	}
	return &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
			syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP,
		UidMappings: maps(uid), GidMappings: maps(gid),
		// Root may keep setgroups so the command can drop its supplementary
		// groups; an unprivileged supervisor must deny it to write gid_map.
		GidMappingsEnableSetgroups: uid == 0,
		Setsid:                     true,
		Pdeathsig:                  syscall.SIGKILL,
		UseCgroupFD:                true,
		CgroupFD:                   cgfd,
		PidFD:                      pidfd,
	}
}

func (h *helper) closeAll() {
	for _, f := range append(h.childEnd, h.policyW, h.statusR, h.outR[0], h.outR[1]) {
		if f != nil {
			f.Close()
		}
	}
}

// release arms the outside limits that need the helper's pid, then sends the
// policy; the helper does nothing before it has read the policy, and joins
// the v1 job cgroups first thing after (joinV1Self).
func (h *helper) release(lim Limits, p childPolicy) error {
	pid := h.cmd.Process.Pid
	p.V1Tasks = h.v1Tasks
	rl := []struct {
		res int
		v   uint64
	}{{unix.RLIMIT_FSIZE, uint64(lim.FileSize)}, {unix.RLIMIT_CORE, 0}, {unix.RLIMIT_NOFILE, 4096}}
	for _, r := range rl {
		if err := unix.Prlimit(pid, r.res, &unix.Rlimit{Cur: r.v, Max: r.v}, nil); err != nil {
			return unavailable("rlimit", "prlimit on the helper", err)
		}
	}
	err := json.NewEncoder(h.policyW).Encode(p)
	h.policyW.Close()
	if err != nil {
		return fault.Wrap(fault.ProcessError, "sandbox.policy", "cannot send the sandbox policy", err)
	}
	return nil
}

// status reads the helper's report (nil when it died without one).
func (h *helper) status() *childStatus {
	defer h.statusR.Close()
	var st childStatus
	if err := json.NewDecoder(h.statusR).Decode(&st); err != nil {
		return nil
	}
	return &st
}

// kill ends the whole tree: cgroup.kill, plus SIGKILL to PID 1 through its
// pidfd (either alone suffices; both are cheap).
func (h *helper) kill(cg *jobCgroups) {
	if !testOnlyBreakKill {
		_ = cg.kill()
		if h.pidfd >= 0 {
			_ = unix.PidfdSendSignal(h.pidfd, unix.SIGKILL, nil, 0)
		}
	}
}
