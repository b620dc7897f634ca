//go:build linux && amd64

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// probeCase is one containment probe: an optional host-side setup, the run
// inside the sandbox, and a host-side verdict over the receipt and output.
type probeCase struct {
	name string
	// inside is the probe run inside the sandbox ("" = name).
	inside string
	// agent runs the probe in the agent profile (gate channel at
	// DefaultGatePort, served by probeHost.gate or a listener that
	// accepts and closes).
	agent bool
	// verify runs the probe in the verify profile, on the candidate view
	// of probeHost.dir/ws below probeHost.dir/upper (verify_linux.go).
	verify bool
	limits Limits
	env    []string
	// setup returns the probe's arguments and a host-side check run after
	// the sandbox run (nil: none).
	setup func(t *probeHost) ([]string, func(Receipt) (bool, string))
	// expect judges the run; nil means "exited 0 and reported contained".
	expect func(r Receipt, rep probeReport) (bool, string)
	// cancelOn cancels the run once this line appears on stdout.
	cancelOn string
	// hostOnly probes start no sandbox (admission and refusal checks).
	hostOnly func(ctx context.Context, s *Sandbox) (bool, string)
	// foreignABI probes are judged with a control run of the same call
	// outside seccomp (abi_linux.go).
	foreignABI bool
}

// probeHost carries host-side fixtures of one probe.
type probeHost struct {
	dir     string
	cleanup []func()
	gate    func(net.Listener) // agent probes' gate; nil = accept and close
}

func (h *probeHost) onCleanup(f func()) { h.cleanup = append(h.cleanup, f) }

// secretEnv is a synthetic provider credential set injected into probe
// environments; no real credential is ever used.
func secretEnv() []string {
	fake := "sk-ant-" + strings.Repeat("A", 24)
	var out []string
	for _, n := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN",
		"GH_TOKEN", "HF_TOKEN", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "LD_PRELOAD", "BASH_ENV",
		"NODE_OPTIONS", "GIT_SSH_COMMAND", "FOO_SECRET"} {
		out = append(out, n+"="+fake)
	}
	return append(out, "ALLOWED_NAME=1")
}

func exitedContained(r Receipt, rep probeReport) (bool, string) {
	return r.Exit.Success() && rep.Contained, rep.Detail
}

// probeCases is the containment list of notes/sandbox.md §7 that applies to
// the task sandbox, plus the limit tests.
func probeCases() []probeCase {
	return []probeCase{
		{name: "write_outside", setup: canaryArg},
		{name: "unix_sockets", setup: hostUnixSocket},
		{name: "tcp", setup: hostTCP},
		{name: "udp", setup: hostUDP},
		{name: "dns"},
		{name: "ia32", foreignABI: true},
		{name: "x32", foreignABI: true},
		{name: "mptcp"},
		{name: "abstract", setup: hostAbstract},
		{name: "terminal"},
		{name: "symlink_swap", setup: symlinkCanary},
		{name: "fds", setup: leakFD},
		{name: "proc"},
		{name: "env", env: secretEnv(), expect: onlyAllowedEnv},
		{name: "userns"},
		{name: "families"},
		{name: "ptrace"},
		{name: "argv", setup: argvArgs, expect: argvVerbatim},
		{name: "tree_kill", cancelOn: "ready", expect: cancelledEmpty},
		{name: "fork_bomb", limits: Limits{Pids: 32}, expect: pidsStopped},
		{name: "memory", limits: Limits{Memory: 64 << 20, Tmp: 8 << 20}, expect: outOfMemory},
		// The agent profile (issue 15 scope 2): its one channel works,
		// and every other way out stays shut.
		{name: "agent_gate", agent: true, inside: "gate", setup: hostGate},
		{name: "agent_tcp", agent: true, inside: "tcp", setup: hostTCP},
		{name: "agent_udp", agent: true, inside: "udp", setup: hostUDP},
		{name: "agent_dns", agent: true, inside: "dns"},
		{name: "agent_mptcp", agent: true, inside: "mptcp"},
		{name: "agent_unix_sockets", agent: true, inside: "unix_sockets", setup: hostUnixSocket},
		{name: "agent_abstract", agent: true, inside: "abstract", setup: hostAbstract},
		// The verify profile (issue 16 scope 4): the candidate is
		// visible merged and read-only, and there is no network.
		{name: "verify_view", verify: true, setup: verifyFixture},
		{name: "verify_tcp", verify: true, inside: "tcp", setup: verifyTCP},
		{name: "caller_roots", hostOnly: callerRoots},
		{name: "fail_open", hostOnly: failOpen},
	}
}

// runProbes runs every probe and assembles the record.
func (s *Sandbox) runProbes(ctx context.Context, id identity) (*Qualification, error) {
	digest, err := binaryDigest()
	if err != nil {
		return nil, err
	}
	q := &Qualification{BinaryDigest: digest, BinaryKey: id.binaryKey, KernelRelease: id.kernel,
		LandlockABI: id.abi, PolicyDigest: id.policy, Time: time.Now().UTC(), Passed: true}
	for _, pc := range probeCases() {
		res, err := s.RunProbe(ctx, pc.name)
		if err != nil && fault.HasCode(err, fault.SandboxUnavailable) {
			return nil, err
		}
		if err != nil {
			res = ProbeResult{Name: pc.name, Detail: "probe error: " + err.Error()}
		}
		q.Probes = append(q.Probes, res)
		q.Passed = q.Passed && res.Contained
	}
	return q, nil
}

// RunProbe runs one named containment probe and reports whether it ended
// contained. It does not require qualification (it is how qualification
// is earned). Names: see [ProbeNames].
func (s *Sandbox) RunProbe(ctx context.Context, name string) (ProbeResult, error) {
	for _, pc := range probeCases() {
		if pc.name == name {
			start := time.Now()
			res, err := s.runProbe(ctx, pc)
			res.Name, res.MS = name, ms(time.Since(start))
			return res, err
		}
	}
	return ProbeResult{}, invalid("sandbox.probe", "unknown probe")
}

// ProbeNames lists the containment probes in qualification order.
func ProbeNames() []string {
	var out []string
	for _, pc := range probeCases() {
		out = append(out, pc.name)
	}
	return out
}

func (s *Sandbox) runProbe(ctx context.Context, pc probeCase) (ProbeResult, error) {
	if pc.hostOnly != nil {
		ok, d := pc.hostOnly(ctx, s)
		return ProbeResult{Contained: ok, Detail: d}, nil
	}
	dir, err := os.MkdirTemp("", "coagent8-probe-")
	if err != nil {
		return ProbeResult{}, err
	}
	host := &probeHost{dir: dir}
	defer func() {
		for _, f := range host.cleanup {
			f()
		}
		os.RemoveAll(dir)
	}()
	var args []string
	var hostCheck func(Receipt) (bool, string)
	if pc.setup != nil {
		args, hostCheck = pc.setup(host)
	}
	var ctl abiControl
	if pc.foreignABI {
		ctl = controlRun(ctx, pc.name)
	}
	r, out, err := s.runProbeJob(ctx, pc, args, host)
	if err != nil {
		return ProbeResult{}, err
	}
	var rep probeReport
	reported := json.Unmarshal(lastLine(out), &rep) == nil
	if pc.foreignABI {
		v := judgeForeignABI(pc.name, r, rep, reported, ctl)
		return ProbeResult{Contained: v.contained, HostLacks: v.hostLacks, Detail: v.detail, Exit: r.Exit.Class.String()}, nil
	}
	expect := pc.expect
	if expect == nil {
		expect = exitedContained
	}
	ok, detail := expect(r, rep)
	if hostCheck != nil {
		hok, hd := hostCheck(r)
		ok, detail = ok && hok, detail+"; host: "+hd
	}
	if !ok {
		detail = failedDetail(detail, r, out, reported)
	}
	return ProbeResult{Contained: ok, Detail: detail, Exit: r.Exit.Class.String()}, nil
}

// failedDetail adds to a failing probe's detail how the run ended and,
// when the probe printed no report, the tail of what it printed: a failing
// qualification must say what happened (issue 14).
func failedDetail(detail string, r Receipt, out []byte, reported bool) string {
	d := detail + " (" + exitText(r.Exit) + ")"
	if !reported {
		d = fmt.Sprintf("the probe printed no report, output %q … %q; %s", head(out, 200), tail(out, 200), d)
	}
	return d
}

// runProbeJob runs this binary inside the sandbox in probe mode.
func (s *Sandbox) runProbeJob(ctx context.Context, pc probeCase, args []string, host *probeHost) (Receipt, []byte, error) {
	dir := host.dir
	lim, err := pc.limits.withDefaults()
	if err != nil {
		return Receipt{}, nil, err
	}
	if pc.limits.Wall == 0 {
		lim.Wall = 20 * time.Second
	}
	env, removed, err := buildEnv(pc.env)
	if err != nil {
		return Receipt{}, nil, err
	}
	out := &lineWatch{want: pc.cancelOn}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out.hit = cancel
	inside := pc.inside
	if inside == "" {
		inside = pc.name
	}
	j := job{path: probePath, args: append([]string{probeArg, inside}, args...), env: env, envRemoved: removed,
		dir: insideWorkspace, limits: lim, stdout: out, stderr: out, artifactsTo: filepath.Join(dir, "collected"),
		binds: []bind{{Src: "/proc/self/exe", Dst: probePath}}}
	if j.binds[0].Src, err = os.Readlink("/proc/self/exe"); err != nil {
		return Receipt{}, nil, unavailable("binary", "a readable /proc/self/exe", err)
	}
	if err := os.Mkdir(j.artifactsTo, 0o700); err != nil {
		return Receipt{}, nil, err
	}
	if pc.agent {
		j.gate = &gateChannel{port: DefaultGatePort, serve: host.gate}
		if j.gate.serve == nil {
			j.gate.serve = acceptAndClose
		}
	}
	if pc.verify {
		j.readWS, j.verifyUpper = filepath.Join(dir, "ws"), filepath.Join(dir, "upper")
	}
	r, err := s.runJob(ctx, j, "")
	return r, out.bytes(), err
}

// lineWatch buffers output and calls hit once a wanted line appears.
type lineWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	hit  func()
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.want != "" && bytes.Contains(w.buf.Bytes(), []byte(w.want+"\n")) {
		w.hit()
	}
	return len(p), nil
}

func (w *lineWatch) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

func canaryArg(h *probeHost) ([]string, func(Receipt) (bool, string)) {
	p := filepath.Join(h.dir, "canary")
	_ = os.WriteFile(p, []byte("host"), 0o644)
	return []string{p}, func(Receipt) (bool, string) { return unchanged(p, "host") }
}

func unchanged(p, want string) (bool, string) {
	b, err := os.ReadFile(p)
	return err == nil && string(b) == want, fmt.Sprintf("host canary %q (%v)", b, err)
}

func hostUnixSocket(h *probeHost) ([]string, func(Receipt) (bool, string)) {
	p := filepath.Join(h.dir, "host.sock")
	return []string{p}, listenAndCount(h, "unix", p)
}

func hostAbstract(h *probeHost) ([]string, func(Receipt) (bool, string)) {
	name := "coagent8-probe-" + newJobID()
	return []string{name}, listenAndCount(h, "unix", "@"+name)
}

func hostTCP(h *probeHost) ([]string, func(Receipt) (bool, string)) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return []string{"1"}, func(Receipt) (bool, string) { return false, err.Error() }
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	count := acceptCount(h, l)
	count2 := listenAndCount(h, "tcp", "127.0.0.2:"+port)
	return []string{port}, func(r Receipt) (bool, string) {
		ok1, d1 := count(r)
		ok2, d2 := count2(r)
		return ok1 && ok2, d1 + "; 127.0.0.2 " + d2
	}
}

func listenAndCount(h *probeHost, network, addr string) func(Receipt) (bool, string) {
	l, err := net.Listen(network, addr)
	if err != nil {
		return func(Receipt) (bool, string) { return false, "host listener: " + err.Error() }
	}
	return acceptCount(h, l)
}

// acceptCount counts connections reaching a host listener; contained means
// none did.
func acceptCount(h *probeHost, l net.Listener) func(Receipt) (bool, string) {
	var mu sync.Mutex
	n := 0
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			n++
			mu.Unlock()
			c.Close()
		}
	}()
	h.onCleanup(func() { l.Close() })
	return func(Receipt) (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return n == 0, fmt.Sprintf("%d connections reached the host listener", n)
	}
}

func hostUDP(h *probeHost) ([]string, func(Receipt) (bool, string)) {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return []string{"1"}, func(Receipt) (bool, string) { return false, err.Error() }
	}
	h.onCleanup(func() { c.Close() })
	port := strconv.Itoa(c.LocalAddr().(*net.UDPAddr).Port)
	return []string{port}, func(Receipt) (bool, string) {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		n, _, err := c.ReadFrom(make([]byte, 64))
		return n == 0 && err != nil, fmt.Sprintf("host listener read %d bytes", n)
	}
}

func symlinkCanary(h *probeHost) ([]string, func(Receipt) (bool, string)) {
	p := filepath.Join(h.dir, "canary")
	_ = os.WriteFile(p, []byte("host"), 0o644)
	return []string{p}, func(r Receipt) (bool, string) {
		ok, d := unchanged(p, "host")
		ents, _ := os.ReadDir(filepath.Join(h.dir, "collected"))
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
			ok = ok && e.Type().IsRegular()
		}
		ok = ok && len(r.Artifacts) == 1 && r.Artifacts[0].Path == "ok.txt" && len(r.ArtifactsRejected) == 3
		return ok, fmt.Sprintf("%s; collected %v; rejected %v", d, names, r.ArtifactsRejected)
	}
}

// leakFD opens a descriptor without close-on-exec in the supervisor while
// the probe runs; the child must not see it.
func leakFD(h *probeHost) ([]string, func(Receipt) (bool, string)) {
	fd, err := leakableFD(h.dir)
	if err == nil {
		h.onCleanup(func() { closeFD(fd) })
	}
	return nil, func(Receipt) (bool, string) { return err == nil, fmt.Sprintf("leak candidate fd %d (%v)", fd, err) }
}

func onlyAllowedEnv(r Receipt, rep probeReport) (bool, string) {
	want := "ALLOWED_NAME,HOME,LANG,PATH,TMPDIR"
	got := strings.Split(rep.Detail, ",")
	sortStrings(got)
	ok := r.Exit.Success() && strings.Join(got, ",") == want && len(r.EnvRemoved) == 13
	return ok, fmt.Sprintf("child env names %v, removed %v", got, r.EnvRemoved)
}

var probeArgvValues = []string{"--bind=/=/", "-c", "$(id)", ";", "a\nb", "\x1b[31mred", "é"}

func argvArgs(*probeHost) ([]string, func(Receipt) (bool, string)) {
	return probeArgvValues, nil
}

func argvVerbatim(r Receipt, rep probeReport) (bool, string) {
	want, _ := json.Marshal(probeArgvValues)
	return r.Exit.Success() && rep.Detail == string(want), "child argv " + rep.Detail
}

func cancelledEmpty(r Receipt, _ probeReport) (bool, string) {
	return r.Exit.Class == ExitCancelled && r.TreeEmpty, fmt.Sprintf("exit %s, tree empty %v, run %.0f ms", r.Exit.Class, r.TreeEmpty, r.RunMS)
}

func pidsStopped(r Receipt, rep probeReport) (bool, string) {
	ok := r.Exit.Success() && rep.Contained && r.Observed.PidsLimitHits > 0 && r.Observed.PidsMax == 32 && r.TreeEmpty
	return ok, fmt.Sprintf("%s; pids.max %d, limit hits %d", rep.Detail, r.Observed.PidsMax, r.Observed.PidsLimitHits)
}

func outOfMemory(r Receipt, rep probeReport) (bool, string) {
	ok := r.Exit.Class == ExitOutOfMemory && r.Observed.MemoryLimitBytes == 64<<20 && r.TreeEmpty
	return ok, fmt.Sprintf("exit %s, memory limit %d, peak %d, oom kills %d %s", r.Exit.Class,
		r.Observed.MemoryLimitBytes, r.Observed.MemoryPeakBytes, r.Observed.OOMKills, rep.Detail)
}

// callerRoots checks that caller-controlled roots are rejected (notes test
// 10) and non-canonical executables too (test 18).
func callerRoots(_ context.Context, s *Sandbox) (bool, string) {
	dir, err := os.MkdirTemp("", "coagent8-roots-")
	if err != nil {
		return false, err.Error()
	}
	defer os.RemoveAll(dir)
	link := filepath.Join(dir, "home")
	_ = os.Symlink("/home", link)
	bad := []Spec{
		{Path: "/usr/bin/true", Input: "/"}, {Path: "/usr/bin/true", Input: ".."},
		{Path: "/usr/bin/true", Input: dir + "/job/../.."}, {Path: "/usr/bin/true", Input: link},
		{Path: "/usr/bin/true", Input: s.cfg.JobsDir + "/x"}, {Path: "/usr/bin/true", ReadOnly: []string{"/proc"}},
		{Path: "bin/sh"}, {Path: "/usr/bin/../bin/sh"}, {Path: "/usr/bin/sh\n"}, {Path: "/usr/bin/sh\x00x"},
		{Path: "/usr/bin/true", Dir: "../x"},
	}
	var accepted []string
	for _, sp := range bad {
		if _, err := s.admit(sp); !fault.HasCode(err, fault.InvalidInput) {
			accepted = append(accepted, fmt.Sprintf("%q/%q", sp.Path, sp.Input))
		}
	}
	return len(accepted) == 0, fmt.Sprintf("%d bad roots and executables, accepted: %v", len(bad), accepted)
}

// failOpen checks that missing capabilities refuse instead of running
// (notes tests 19–20): a Landlock floor above the host's ABI and a cgroup
// root that does not exist.
func failOpen(ctx context.Context, s *Sandbox) (bool, string) {
	h, _ := readHost()
	cfgs := map[string]Config{"landlock": s.cfg, "cgroup": s.cfg}
	c := cfgs["landlock"]
	c.MinLandlockABI = h.abi + 1
	cfgs["landlock"] = c
	c = cfgs["cgroup"]
	c.CgroupRoot = "/nonexistent-cgroup-root"
	cfgs["cgroup"] = c
	ok := true
	var d []string
	for name, cfg := range cfgs {
		sb, err := New(cfg)
		if err == nil {
			var j job
			if j, err = sb.admit(Spec{Path: "/usr/bin/true"}); err == nil {
				_, err = sb.runJob(ctx, j, "")
			}
		}
		fe := fault.From(err)
		ok = ok && fe != nil && fe.Code == fault.SandboxUnavailable
		d = append(d, fmt.Sprintf("%s: %v", name, err))
	}
	return ok, strings.Join(d, "; ")
}

// hostGate serves the agent probe's gate: one exchange ("ping" → "pong")
// is expected.
func hostGate(h *probeHost) ([]string, func(Receipt) (bool, string)) {
	var n atomic.Int64
	h.gate = func(ln net.Listener) {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := io.ReadFull(c, make([]byte, 4)); err == nil {
					_, _ = c.Write([]byte("pong"))
				}
			}()
		}
	}
	return []string{strconv.Itoa(DefaultGatePort)}, func(Receipt) (bool, string) {
		return n.Load() == 1, fmt.Sprintf("%d connections reached the gate", n.Load())
	}
}

func acceptAndClose(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}
