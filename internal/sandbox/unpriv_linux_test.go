//go:build linux && amd64

package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/fault"
)

// The unprivileged-supervisor test (issue 15): users run coagent8 as
// themselves, but CI runs as root, where every other test takes the root
// branch (idmapped lower trees, open_tree pins, the command as nobody).
// TestUnprivilegedSupervisor re-runs a copy of this test binary as an
// unprivileged uid, which takes the other branch everywhere: PID 1
// clones the workspace itself, the command runs as the supervisor's own
// uid (namespace root), pins are checked by descriptor.
const (
	// unprivPhaseEnv selects the child's phase ("cases", "changed"); its
	// absence makes the test the parent.
	unprivPhaseEnv = "COAGENT8_UNPRIV_PHASE"
	// unprivStateEnv is the state directory both phases share (the
	// qualification record).
	unprivStateEnv = "COAGENT8_UNPRIV_STATE"
	// unprivUID is the uid (and gid) a root parent runs the child as.
	unprivUID = 65534
	// unprivMarker is a byte string the child logs, so it is in the
	// binary: the parent changes one of its bytes between the phases.
	unprivMarker = "coagent8-unprivileged-supervisor-marker"
)

// TestUnprivilegedSupervisor runs the sandbox with an unprivileged
// supervisor, for real: the parent (root in CI) copies this test binary
// into a 0755 directory, delegates a cgroup to uid 65534, and runs the
// copy as 65534 (no capabilities, no supplementary groups) with its own
// HOME and TMPDIR. Phase "cases": the task profile running a command
// (artifacts, job roots removed, also with a mode-000 directory 300
// levels deep; a dead run's root swept), the candidate
// profile (edit, deletion, rename; the workspace untouched;
// candidate.Changes sees them; the caller can remove its candidate
// directory; also after the command made entries mode 000; seeded), the
// read profile (writes refused), the agent profile's gate channel
// (loopback to anything else fails), a pinned executable (checked by
// descriptor), the userns refusal, the git views, verify and a full
// qualification. Then the parent changes one byte of the copy, and phase
// "changed" is refused for want of a qualification. Run by a non-root
// user the parent runs the copy as itself.
func TestUnprivilegedSupervisor(t *testing.T) {
	if phase := os.Getenv(unprivPhaseEnv); phase != "" {
		unprivChild(t, phase, os.Getenv(unprivStateEnv))
		return
	}
	h := newUnprivHarness(t)
	h.run(t, "cases")
	h.changeOneByte(t)
	h.run(t, "changed")
}

// unprivHarness is the parent's set-up: a base directory (0755) holding
// the binary copy, the child's HOME, TMPDIR and state directory (owned by
// the child's uid), and the cgroups delegated to it.
type unprivHarness struct {
	base, exe string
	cred      *syscall.Credential // nil: the child runs as we do
	cgroups   []string
}

func newUnprivHarness(t *testing.T) *unprivHarness {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "coagent8-unpriv-") // /tmp is the sandbox's own
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	h := &unprivHarness{base: base, exe: filepath.Join(base, "bin", "sandbox.test")}
	uid := os.Geteuid()
	if uid == 0 {
		uid = unprivUID
		h.cred = &syscall.Credential{Uid: unprivUID, Gid: unprivUID, Groups: []uint32{}}
	}
	for _, d := range []string{"", "bin", "home", "tmp", "state"} {
		p := filepath.Join(base, d)
		mode := os.FileMode(0o700)
		if d == "" || d == "bin" {
			mode = 0o755 // traversable by the child; owned by us
		}
		if err := os.MkdirAll(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if mode == 0o700 {
			if err := os.Lchown(p, uid, uid); err != nil {
				t.Fatal(err)
			}
		}
	}
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.exe, self, 0o755); err != nil {
		t.Fatal(err)
	}
	if h.cred != nil {
		h.cgroups = delegateCgroups(t, "coagent8-unpriv-"+newJobID(), unprivUID)
	}
	return h
}

// delegateCgroups creates name beside this process in its v2 cgroup and
// in each v1 hierarchy of a limit controller (hybrid hosts), owned by uid
// with their files (cgroup delegation: the child creates the job cgroups
// beneath), and removes them at cleanup.
func delegateCgroups(t *testing.T, name string, uid int) []string {
	t.Helper()
	self, err := selfCgroups()
	if err != nil {
		t.Fatal(err)
	}
	const root = "/sys/fs/cgroup"
	v2 := root
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err != nil {
		v2 = filepath.Join(root, "unified")
	}
	parents := []string{filepath.Join(v2, self[""])}
	for _, c := range append(limitControllers, "cpuacct") {
		if p, ok := self[c]; ok {
			if _, err := os.Stat(filepath.Join(root, c, "cgroup.procs")); err == nil {
				parents = append(parents, filepath.Join(root, c, p))
			}
		}
	}
	seen := map[string]bool{}
	var dirs []string
	for _, parent := range parents {
		real, err := filepath.EvalSymlinks(parent) // cpu and cpuacct may share a hierarchy
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(real, name)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeCgroupTree(dir) })
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range append([]string{""}, names(ents)...) {
			if err := os.Lchown(filepath.Join(dir, p), uid, uid); err != nil {
				t.Fatal(err)
			}
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

func names(ents []os.DirEntry) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// removeCgroupTree removes dir and any cgroup the child left beneath it,
// deepest first (a cgroup directory goes by rmdir only).
func removeCgroupTree(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			removeCgroupTree(filepath.Join(dir, e.Name()))
		}
	}
	_ = syscall.Rmdir(dir)
}

// run runs the copy in phase and fails the test with its output unless
// every one of its tests passed.
func (h *unprivHarness) run(t *testing.T, phase string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.exe, "-test.run=^TestUnprivilegedSupervisor$", "-test.count=1", "-test.v",
		"-test.timeout=7m")
	cmd.Dir = h.base
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(h.base, "home"), "TMPDIR=" + filepath.Join(h.base, "tmp"),
		unprivPhaseEnv + "=" + phase, unprivStateEnv + "=" + filepath.Join(h.base, "state")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: h.cred, Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	release, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child waits for this byte: it runs nothing before it is in
	// the delegated cgroups.
	for _, dir := range h.cgroups {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("move the child into %s: %v", dir, err)
		}
	}
	_, _ = release.Write([]byte{1})
	release.Close()
	err = cmd.Wait()
	t.Logf("phase %s:\n%s", phase, out.String())
	if err != nil || !strings.Contains(out.String(), "--- PASS: TestUnprivilegedSupervisor ") {
		t.Fatalf("phase %s as an unprivileged supervisor: %v (output above)", phase, err)
	}
}

// changeOneByte changes one byte of the copy (in unprivMarker's bytes,
// so it still runs).
func (h *unprivHarness) changeOneByte(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(h.exe)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(unprivMarker))
	if i < 0 {
		t.Fatal("the marker is not in the binary")
	}
	f, err := os.OpenFile(h.exe, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte{b[i] ^ 0x20}, int64(i)); err != nil {
		t.Fatal(err)
	}
}

// unprivChild is the child: it waits for the parent's byte, checks that
// it really is unprivileged, and runs phase.
func unprivChild(t *testing.T, phase, state string) {
	var b [1]byte
	if _, err := io.ReadFull(os.Stdin, b[:]); err != nil {
		t.Fatalf("waiting for the parent: %v", err)
	}
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 || !strings.Contains(string(st), "CapEff:\t0000000000000000") {
		t.Fatalf("the child is privileged: euid %d\n%s", os.Geteuid(), st)
	}
	t.Logf("%s: euid %d, phase %s", unprivMarker, os.Geteuid(), phase)
	switch phase {
	case "cases":
		t.Run("task", unprivTask)
		t.Run("stale root swept", unprivStaleSwept)
		t.Run("deep locked scratch", unprivDeepLocked)
		t.Run("candidate", unprivCandidate)
		t.Run("read", unprivRead)
		t.Run("gate", unprivGate)
		t.Run("pinned", unprivPinned)
		t.Run("userns refused", unprivUsernsRefused)
		t.Run("seeded", TestCandidateSeeded)
		t.Run("git layer removable", unprivGitLayer)
		t.Run("git", TestCandidateGit)
		t.Run("git dir outside", TestGitDirOutsideWorkspace)
		t.Run("verify", TestRunVerify)
		t.Run("qualification", func(t *testing.T) { unprivQualify(t, state) })
	case "changed":
		unprivChanged(t, state)
	default:
		t.Fatalf("unknown phase %q", phase)
	}
}

// newUnprivSandbox is a sandbox with its own jobs directory, so a test
// can see what the runs left there.
func newUnprivSandbox(t *testing.T) *Sandbox {
	t.Helper()
	s, err := New(Config{StateDir: t.TempDir(), JobsDir: filepath.Join(t.TempDir(), "jobs")})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// jobRootsLeft lists the job roots left in s's jobs directory.
func jobRootsLeft(t *testing.T, s *Sandbox) []string {
	t.Helper()
	ents, err := os.ReadDir(s.cfg.JobsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return names(ents)
}

// unprivTask: the task profile runs a command as namespace root (our
// uid) on a copy of the input; artifacts it made mode 000 are collected;
// a directory it made inaccessible in scratch does not keep its job root
// behind.
func unprivTask(t *testing.T) {
	s := newUnprivSandbox(t)
	in := t.TempDir()
	writeTree(t, in, map[string]string{"in.txt": "input\n"})
	before := treeHash(t, in)
	var out bytes.Buffer
	script := `set -e; id -u; cat in.txt; echo made > out.txt; cat out.txt
mkdir -p /job/scratch/locked/deep; echo x > /job/scratch/locked/deep/f; chmod 000 /job/scratch/locked/deep /job/scratch/locked
cd /job/artifacts; echo art > r.txt; mkdir sub; echo s > sub/s.txt; chmod 000 r.txt sub/s.txt sub`
	arts := t.TempDir()
	r := runUnqualified(t, s, testCtx(t), Spec{Path: "/usr/bin/dash", Args: []string{"-c", script}, Input: in,
		ArtifactsTo: arts, Stdout: &out, Stderr: &out})
	if !r.Exit.Success() || out.String() != "0\ninput\nmade\n" {
		t.Errorf("exit %+v output %q, want success and %q", r.Exit, out.String(), "0\ninput\nmade\n")
	}
	// Artifacts the command made mode 000 are collected, as by a root
	// supervisor.
	var got []string
	for _, a := range r.Artifacts {
		got = append(got, a.Path)
	}
	slices.Sort(got)
	if d := cmp.Diff([]string{"r.txt", "sub/s.txt"}, got); d != "" || len(r.ArtifactsRejected) != 0 {
		t.Errorf("artifacts (-want +got):\n%s\nrejected %v", d, r.ArtifactsRejected)
	}
	if after := treeHash(t, in); after != before {
		t.Error("the input directory changed")
	}
	if left := jobRootsLeft(t, s); len(left) != 0 {
		t.Errorf("job roots left in the jobs directory: %v", left)
	}
}

// unprivDeepLocked: a non-empty directory the command made mode 000
// 300 levels down in scratch (deeper than the owner grant reached) does
// not keep its job root behind.
func unprivDeepLocked(t *testing.T) {
	s := newUnprivSandbox(t)
	script := `set -e; cd /job/scratch; i=0; while [ $i -lt 300 ]; do mkdir d; cd d; i=$((i+1)); done; echo x > f; chmod 000 .`
	var out bytes.Buffer
	r := runUnqualified(t, s, testCtx(t), Spec{Path: "/usr/bin/dash", Args: []string{"-c", script}, Stdout: &out, Stderr: &out})
	if !r.Exit.Success() {
		t.Fatalf("exit %+v output %q", r.Exit, out.String())
	}
	if left := jobRootsLeft(t, s); len(left) != 0 {
		t.Errorf("job roots left in the jobs directory: %v", left)
	}
}

// unprivStaleSwept: the job root of a dead run holding a directory its
// command made mode 000 is swept by the next run.
func unprivStaleSwept(t *testing.T) {
	s := newUnprivSandbox(t)
	if err := ensureJobsDir(s.cfg.JobsDir); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(s.cfg.JobsDir, newJobID())
	writeTree(t, dead, map[string]string{"scratch/locked/deep/f": "x"})
	f, err := lockJobRoot(dead)
	if err != nil {
		t.Fatal(err)
	}
	f.Close() // its supervisor died: the kernel dropped the lock
	for _, d := range []string{"scratch/locked/deep", "scratch/locked"} {
		if err := os.Chmod(filepath.Join(dead, d), 0); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleMinAge)
	if err := os.Chtimes(dead, old, old); err != nil {
		t.Fatal(err)
	}
	if r := runUnqualified(t, s, testCtx(t), Spec{Path: "/usr/bin/true"}); !r.Exit.Success() {
		t.Fatalf("exit %+v", r.Exit)
	}
	if left := jobRootsLeft(t, s); len(left) != 0 {
		t.Errorf("job roots left after the sweep: %v", left)
	}
}

// unprivCandidate: the candidate overlay PID 1 clones itself: an edit, a
// deletion, a rename and an addition land in upper/ (owned by us), the
// workspace is byte-identical, candidate.Changes sees every change (also
// in a directory the command made mode 000), an owner-only file is
// readable, and the candidate directory holds only upper/, which the
// caller can remove.
func unprivCandidate(t *testing.T) {
	s := newUnprivSandbox(t)
	ws, dir := t.TempDir(), t.TempDir()
	writeTree(t, ws, map[string]string{"mod.txt": "old\n", "del.txt": "bye\n", "old.txt": "moved\n", "keep.txt": "keep\n",
		"d/x": "x\n"})
	if err := os.WriteFile(filepath.Join(ws, "private.txt"), []byte("owner only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, ws)
	var out bytes.Buffer
	script := `set -e; cd /job/workspace; id -u; echo new > mod.txt; rm del.txt; mv old.txt renamed.txt
echo added > add.txt; echo y > d/y; cat private.txt keep.txt
mkdir locked; echo in > locked/f; echo hidden > locked/g; chmod 000 locked/g locked`
	r, err := s.runAgentUnqualified(t, AgentSpec{Spec: Spec{Path: "/usr/bin/dash", Args: []string{"-c", script},
		Stdout: &out, Stderr: &out}, Gate: func(net.Listener) {}, Candidate: &Candidate{Workspace: ws, Dir: dir}})
	if err != nil || !r.Exit.Success() {
		t.Fatalf("run: %v exit %+v\n%s", err, r.Exit, out.String())
	}
	if got, want := out.String(), "0\nowner only\nkeep\n"; got != want {
		t.Errorf("inside printed %q, want %q", got, want)
	}
	if after := treeHash(t, ws); after != before {
		t.Error("the user's workspace changed")
	}
	upper := filepath.Join(dir, "upper")
	ch, err := candidate.Changes(ws, upper)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range ch {
		got[c.Path] = c.Kind.String()
	}
	want := map[string]string{"mod.txt": "modified", "del.txt": "deleted", "old.txt": "deleted", "renamed.txt": "added",
		"add.txt": "added", "d/y": "added", "locked": "added", "locked/f": "added", "locked/g": "added"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("candidate changes (-want +got):\n%s", d)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(upper, "renamed.txt"), &st); err != nil || int(st.Uid) != os.Geteuid() {
		t.Errorf("upper/renamed.txt: %v, owner %d, want our uid %d", err, st.Uid, os.Geteuid())
	}
	// The command made these mode 000; their content is readable for the
	// patch, as it is to a root supervisor.
	if b, err := os.ReadFile(filepath.Join(upper, "locked", "g")); err != nil || string(b) != "hidden\n" {
		t.Errorf("upper/locked/g: %q, %v", b, err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 || names[0].Name() != "upper" {
		t.Errorf("the candidate directory holds %v, want upper/ only", names)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Errorf("the caller cannot remove its candidate directory: %v", err)
	}
	if left := jobRootsLeft(t, s); len(left) != 0 {
		t.Errorf("job roots left: %v", left)
	}
}

// unprivGitLayer: a directory the command made mode 000 in the git
// directory's candidate layer (a linked worktree's common directory)
// does not keep the caller from removing its candidate directory.
func unprivGitLayer(t *testing.T) {
	s := newUnprivSandbox(t)
	l := linkedWorktree(t)
	dir := t.TempDir()
	script := `set -e; cd "$(git -C /job/workspace rev-parse --git-common-dir)"; mkdir -p x/y; echo z > x/y/z; chmod 000 x/y x`
	var out bytes.Buffer
	r, err := s.runAgentUnqualified(t, AgentSpec{Spec: Spec{Path: "/usr/bin/dash", Args: []string{"-c", script},
		Stdout: &out, Stderr: &out}, Gate: func(net.Listener) {}, Candidate: &Candidate{Workspace: l.ws, Dir: dir}})
	if err != nil || !r.Exit.Success() {
		t.Fatalf("run: %v exit %+v\n%s", err, r.Exit, out.String())
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Errorf("the caller cannot remove its candidate directory: %v", err)
	}
}

// unprivRead: the read projection PID 1 binds itself shows an
// owner-only file and is read-only.
func unprivRead(t *testing.T) {
	s := newUnprivSandbox(t)
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"a.txt": "visible\n", "sub/b.txt": "b\n"})
	if err := os.WriteFile(filepath.Join(ws, "private.txt"), []byte("owner only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, ws)
	script := `cd /job/workspace; id -u; cat a.txt private.txt
for w in "echo x > a.txt" "echo x > new.txt" "rm sub/b.txt" "mkdir d" "chmod 777 a.txt" "touch sub/c" "mv a.txt z.txt"; do
  if sh -c "$w" 2>/dev/null; then echo "WROTE: $w"; fi
done`
	var out bytes.Buffer
	r, err := s.runAgentUnqualified(t, AgentSpec{Spec: Spec{Path: "/usr/bin/dash", Args: []string{"-c", script},
		Stdout: &out, Stderr: &out}, Gate: func(net.Listener) {}, Read: ws})
	if err != nil || !r.Exit.Success() {
		t.Fatalf("run: %v exit %+v\n%s", err, r.Exit, out.String())
	}
	if got, want := out.String(), "0\nvisible\nowner only\n"; got != want {
		t.Errorf("read profile printed %q, want %q", got, want)
	}
	if after := treeHash(t, ws); after != before {
		t.Error("the user's workspace changed")
	}
}

// unprivGate: the gate is the one channel; a provider double's port and
// another loopback listener see nothing.
func unprivGate(t *testing.T) {
	s := newUnprivSandbox(t)
	double, doubleN := countingTCP(t, "127.0.0.1:0")
	other, otherN := countingTCP(t, "127.0.0.1:0")
	gatePort := other.Addr().(*net.TCPAddr).Port // the gate's port number on the host is another listener
	var gateN atomic.Int64
	gate := func(ln net.Listener) {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gateN.Add(1)
			fmt.Fprint(w, "gate")
		}))
	}
	arg, _ := json.Marshal(agentAttempts{GatePort: gatePort,
		TCP: []string{double.Addr().String(), "127.0.0.1:" + strconv.Itoa(gatePort+1), "[::1]:" + strconv.Itoa(gatePort)}})
	res, _ := runAgentProbe(t, s, AgentSpec{GatePort: gatePort, Gate: gate}, string(arg))
	if got, want := res["gate"], "ok: 200 OK gate"; got != want {
		t.Errorf("gate from inside: %q, want %q", got, want)
	}
	for _, k := range []string{"tcp " + double.Addr().String(), "tcp [::1]:" + strconv.Itoa(gatePort), "bind", "dns go"} {
		if v, ok := res[k]; !ok || v == "ok" {
			t.Errorf("%s from inside: %q (reported %v), want a failure", k, v, ok)
		}
	}
	got := map[string]int64{"gate": gateN.Load(), "double": doubleN.Load(), "other": otherN.Load()}
	if d := cmp.Diff(map[string]int64{"gate": 1, "double": 0, "other": 0}, got); d != "" {
		t.Errorf("what the listeners saw (-want +got):\n%s", d)
	}
}

// unprivPinned: a pinned executable is checked through a descriptor (no
// mount clone unprivileged): the checked file runs, a changed one is
// refused before anything runs.
func unprivPinned(t *testing.T) {
	s := newUnprivSandbox(t)
	exe := filepath.Join(t.TempDir(), "tool")
	original := []byte("#!/bin/sh\necho original\n")
	if err := os.WriteFile(exe, original, 0o755); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(original)
	sum := hex.EncodeToString(h[:])
	spec := func(out *bytes.Buffer) AgentSpec {
		return AgentSpec{Spec: Spec{Path: exe, ReadOnly: []string{exe}, Stdout: out, Stderr: out}, Gate: func(net.Listener) {},
			Pinned: []Pin{{Path: exe, Check: digestCheck(sum)}}}
	}
	var out bytes.Buffer
	r, err := s.runAgentUnqualified(t, spec(&out))
	if err != nil || !r.Exit.Success() || out.String() != "original\n" {
		t.Fatalf("checked pinned file: %v exit %+v output %q, want original", err, r.Exit, out.String())
	}
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho changed\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	_, err = s.runAgentUnqualified(t, spec(&out))
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != "sandbox.pin" {
		t.Errorf("changed pinned file: %v, want SANDBOX_UNAVAILABLE sandbox.pin", err)
	}
	if out.Len() != 0 {
		t.Errorf("something ran: %q", out.String())
	}
}

// unprivUsernsRefused: on a host whose settings deny an unprivileged
// supervisor its user namespace (presented through testOnlyProcRoot), a
// run is refused with SANDBOX_UNAVAILABLE sandbox.userns_unprivileged
// naming the setting before anything starts (no job root is made), and
// Status (doctor) says the same.
func unprivUsernsRefused(t *testing.T) {
	fake := t.TempDir()
	writeTree(t, fake, map[string]string{"sys/kernel/apparmor_restrict_unprivileged_userns": "1\n",
		"self/attr/current": "unconfined\n"})
	testOnlyProcRoot = fake
	defer func() { testOnlyProcRoot = "" }()
	s := newUnprivSandbox(t)
	j, err := s.admit(Spec{Path: "/usr/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.runJob(testCtx(t), j, "test")
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != "sandbox."+reasonUnprivUserns ||
		!strings.Contains(fe.Details["missing"], "kernel.apparmor_restrict_unprivileged_userns") {
		t.Errorf("run: %v, want SANDBOX_UNAVAILABLE sandbox.%s naming the sysctl", err, reasonUnprivUserns)
	}
	if left := jobRootsLeft(t, s); len(left) != 0 {
		t.Errorf("something started: job roots %v", left)
	}
	if st := s.Status(); st.Available || !strings.Contains(st.Missing, "kernel.apparmor_restrict_unprivileged_userns") {
		t.Errorf("status %+v, want unavailable naming the sysctl", st)
	}
}

// unprivQualify: the full qualification passes unprivileged, and admits
// runs; before it a run is refused.
func unprivQualify(t *testing.T, state string) {
	s, err := New(Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(testCtx(t), Spec{Path: "/usr/bin/true"}); !fault.HasCode(err, fault.SandboxUnavailable) {
		t.Fatalf("unqualified run: %v, want SANDBOX_UNAVAILABLE", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	q, err := s.Qualify(ctx)
	if err != nil || !q.Passed {
		t.Fatalf("qualify: %v, failed probes %v", err, q.Failed())
	}
	r, err := s.Run(testCtx(t), Spec{Path: "/usr/bin/true"})
	if err != nil || !r.Exit.Success() || r.BinaryDigest != q.BinaryDigest {
		t.Fatalf("qualified run: %v exit %+v", err, r.Exit)
	}
	if st := s.Status(); !st.Available || !st.Qualified {
		t.Errorf("status after qualifying: %+v", st)
	}
}

// unprivChanged: one byte of this binary changed since the phase that
// qualified it: a run is refused (SANDBOX_UNAVAILABLE
// sandbox.qualification) and Status says it is not qualified.
func unprivChanged(t *testing.T, state string) {
	s, err := New(Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(testCtx(t), Spec{Path: "/usr/bin/true"})
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != "sandbox.qualification" || r.JobID != "" {
		t.Errorf("run by the changed binary: %v (job %q), want SANDBOX_UNAVAILABLE sandbox.qualification, nothing run", err, r.JobID)
	}
	if st := s.Status(); !st.Available || st.Qualified || st.Advice != QualifyAdvice {
		t.Errorf("status of the changed binary: %+v, want available, not qualified, with advice", st)
	}
}
