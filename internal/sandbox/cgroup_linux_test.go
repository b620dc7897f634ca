//go:build linux && amd64

package sandbox

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCommandInEveryJobCgroup: the command runs inside the job's v2 leaf
// (its cgroup namespace root) and inside the job cgroup of every v1
// controller the layout uses for limits (PID 1 joins those itself,
// see compilePlan) — so the limits the receipt reads back are the ones that
// applied to the command.
func TestCommandInEveryJobCgroup(t *testing.T) {
	s := newTestSandbox(t)
	layout, err := detectCgroups(s.cfg.CgroupRoot)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := runUnqualified(t, s, testCtx(t), Spec{Path: "/usr/bin/cat", Args: []string{"/proc/self/cgroup"}, Stdout: &out})
	if !r.Exit.Success() {
		t.Fatalf("exit %+v: %s", r.Exit, out.String())
	}
	got := map[string]string{} // controller → path as the command sees it
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			t.Fatalf("bad /proc/self/cgroup line %q", line)
		}
		for _, c := range strings.Split(parts[1], ",") {
			got[c] = parts[2]
		}
	}
	if got[""] != "/" {
		t.Errorf("v2 cgroup %q, want the job leaf as namespace root %q", got[""], "/")
	}
	want := "/coagent8/" + r.JobID
	for c := range layout.v1 {
		if !strings.HasSuffix(got[c], want) {
			t.Errorf("controller %s: command in %q, want the job cgroup …%s", c, got[c], want)
		}
	}
	t.Logf("layout %s, v1 controllers %d:\n%s", layout.source, len(layout.v1), out.String())
}

// TestCPUWeights: a job's scheduling weight is as many tasks as its CPU
// quota has cores, within the kernel's ranges; the coagent8 cgroup above
// all jobs weighs as many tasks as the host has cores.
func TestCPUWeights(t *testing.T) {
	for _, c := range []struct {
		millicores int64
		host       int
		v2         bool
		job, par   int64
	}{
		{1000, 2, false, 1024, 2048},
		{2000, 2, false, 2048, 2048},
		{10, 2, false, 10, 2048},         // the smallest quota
		{256000, 4, false, 262144, 4096}, // the largest, v1's ceiling
		{1, 1, false, 2, 1024},           // below the range: v1's floor
		{1000, 2, true, 100, 200},
		{2500, 8, true, 250, 800},
		{10, 2, true, 1, 200},
		{256000, 128, true, 10000, 10000}, // v2's ceiling
	} {
		job, par := cpuWeights(c.millicores, c.host, c.v2)
		if job != c.job || par != c.par {
			t.Errorf("cpuWeights(%d, %d, v2=%v) = %d, %d; want %d, %d", c.millicores, c.host, c.v2, job, par, c.job, c.par)
		}
	}
}

// TestJobCgroupCPUWeight: arming a job's cgroups writes its weight and
// the parent's, read back from the kernel: with the default weight a job
// competed as one thread against every process of a busy host.
func TestJobCgroupCPUWeight(t *testing.T) {
	s := newTestSandbox(t)
	layout, err := detectCgroups(s.cfg.CgroupRoot)
	if err != nil {
		t.Fatal(err)
	}
	lim, err := Limits{CPU: 2000}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cg, err := layout.create(newJobID(), lim)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.remove()
	file := "cpu.shares"
	if layout.useV2["cpu"] {
		file = "cpu.weight"
	}
	wantJob, wantParent := cpuWeights(2000, runtime.NumCPU(), layout.useV2["cpu"])
	cpu := cg.dir("cpu")
	for _, c := range []struct {
		path string
		want int64
	}{{filepath.Join(cpu, file), wantJob}, {filepath.Join(filepath.Dir(cpu), file), wantParent}} {
		if got := readInt(c.path); got != c.want {
			t.Errorf("%s = %d, want %d", c.path, got, c.want)
		}
	}
}
