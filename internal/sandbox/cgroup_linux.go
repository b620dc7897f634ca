//go:build linux && amd64

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cgroupLayout says where the job's cgroups go. The v2 leaf is mandatory
// (CLONE_INTO_CGROUP, cgroup.kill, cgroup.events); each limit controller is
// taken from v2 when delegated there, else from its v1 hierarchy (hybrid
// hosts), else the run is refused (notes §3 step 3).
type cgroupLayout struct {
	v2     string            // parent dir for job leaves in the v2 hierarchy
	v1     map[string]string // controller → parent dir in its v1 hierarchy
	useV2  map[string]bool   // controller → limits live in the v2 leaf
	source string            // "v2" or "v2+v1" for receipts
}

// limitControllers are the controllers whose limits must be armed.
var limitControllers = []string{"memory", "pids", "cpu"}

// selfCgroups parses /proc/self/cgroup into controller → path ("" key = v2).
func selfCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, sc.Err()
}

// detectCgroups finds the layout under root or fails closed.
func detectCgroups(root string) (cgroupLayout, error) {
	self, err := selfCgroups()
	if err != nil {
		return cgroupLayout{}, unavailable("cgroup", "a readable /proc/self/cgroup", err)
	}
	v2mount := root
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err != nil {
		v2mount = filepath.Join(root, "unified")
	}
	if _, err := os.Stat(filepath.Join(v2mount, "cgroup.kill")); err != nil {
		if _, err2 := os.Stat(filepath.Join(v2mount, "cgroup.controllers")); err2 != nil {
			return cgroupLayout{}, unavailable("cgroup", "a cgroup v2 hierarchy (for cgroup.kill)", err2)
		}
	}
	l := cgroupLayout{v2: filepath.Join(v2mount, self[""], "coagent8"), v1: map[string]string{},
		useV2: map[string]bool{}, source: "v2"}
	if err := mkdirCgroup(l.v2); err != nil {
		return cgroupLayout{}, unavailable("cgroup", "a writable cgroup v2 directory", err)
	}
	if _, err := os.Stat(filepath.Join(l.v2, "cgroup.kill")); err != nil {
		return cgroupLayout{}, unavailable("cgroup_kill", "cgroup.kill (Linux 5.14+)", err)
	}
	avail, _ := os.ReadFile(filepath.Join(l.v2, "cgroup.controllers"))
	for _, c := range limitControllers {
		if slices.Contains(strings.Fields(string(avail)), c) {
			if writeFile(filepath.Join(l.v2, "cgroup.subtree_control"), "+"+c) == nil {
				l.useV2[c] = true
				continue
			}
		}
		p, ok := self[c]
		dir := filepath.Join(root, c)
		if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); !ok || err != nil {
			return cgroupLayout{}, unavailable("cgroup_"+c, "the "+c+" cgroup controller (neither v2-delegated nor v1-mounted)", err)
		}
		l.v1[c] = filepath.Join(dir, p, "coagent8")
		l.source = "v2+v1"
	}
	if _, ok := l.v1["cpu"]; ok {
		if p, ok := self["cpuacct"]; ok {
			l.v1["cpuacct"] = filepath.Join(root, "cpuacct", p, "coagent8")
		}
	}
	return l, nil
}

// jobCgroups are one job's cgroup directories.
type jobCgroups struct {
	layout cgroupLayout
	leaf   string            // v2 leaf
	v1     map[string]string // controller → v1 job dir
}

// create makes the job's cgroups and arms every limit before the command
// starts; any failure removes what was made and refuses (fail closed).
func (l cgroupLayout) create(id string, lim Limits) (*jobCgroups, error) {
	cg := l.job(id)
	if err := cg.make(); err != nil {
		cg.remove()
		return nil, unavailable("cgroup", "a job cgroup", err)
	}
	if err := cg.arm(lim); err != nil {
		cg.remove()
		return nil, unavailable("cgroup_limits", "armable cgroup limits", err)
	}
	return cg, nil
}

// job names job id's cgroup directories under the layout (nothing is
// created).
func (l cgroupLayout) job(id string) *jobCgroups {
	cg := &jobCgroups{layout: l, leaf: filepath.Join(l.v2, id), v1: map[string]string{}}
	for c, parent := range l.v1 {
		cg.v1[c] = filepath.Join(parent, id)
	}
	return cg
}

func (cg *jobCgroups) make() error {
	if err := mkdirCgroup(cg.leaf); err != nil {
		return err
	}
	for _, dir := range cg.v1 {
		if err := mkdirCgroup(filepath.Dir(dir)); err != nil {
			return err
		}
		if err := mkdirCgroup(dir); err != nil {
			return err
		}
	}
	return nil
}

// dir returns where controller c's files live for this job.
func (cg *jobCgroups) dir(c string) string {
	if cg.layout.useV2[c] {
		return cg.leaf
	}
	return cg.v1[c]
}

func (cg *jobCgroups) arm(lim Limits) error {
	mem, pids, cpu := cg.dir("memory"), cg.dir("pids"), cg.dir("cpu")
	quota := lim.CPU * 100 // millicores → µs per 100 ms period
	var writes [][2]string
	if cg.layout.useV2["memory"] {
		writes = append(writes, [2]string{mem + "/memory.max", itoa(lim.Memory)}, [2]string{mem + "/memory.swap.max", "0"})
	} else {
		writes = append(writes, [2]string{mem + "/memory.limit_in_bytes", itoa(lim.Memory)})
		if exists(mem + "/memory.memsw.limit_in_bytes") {
			writes = append(writes, [2]string{mem + "/memory.memsw.limit_in_bytes", itoa(lim.Memory)})
		}
	}
	writes = append(writes, [2]string{pids + "/pids.max", itoa(lim.Pids)})
	jobW, parentW := cpuWeights(lim.CPU, runtime.NumCPU(), cg.layout.useV2["cpu"])
	if cg.layout.useV2["cpu"] {
		writes = append(writes, [2]string{cpu + "/cpu.max", fmt.Sprintf("%d 100000", quota)},
			[2]string{filepath.Dir(cpu) + "/cpu.weight", itoa(parentW)}, [2]string{cpu + "/cpu.weight", itoa(jobW)})
	} else {
		writes = append(writes, [2]string{cpu + "/cpu.cfs_period_us", "100000"}, [2]string{cpu + "/cpu.cfs_quota_us", itoa(quota)},
			[2]string{filepath.Dir(cpu) + "/cpu.shares", itoa(parentW)}, [2]string{cpu + "/cpu.shares", itoa(jobW)})
	}
	for _, w := range writes {
		if err := writeFile(w[0], w[1]); err != nil {
			return err
		}
	}
	return nil
}

// cpuWeights returns the scheduling weights of a job's cpu cgroup and
// of the coagent8 cgroup above it, for a quota of millicores on a host of
// hostCPUs: v1 cpu.shares (1024 = one nice-0 task, kernel range [2,
// 262144]) or, with v2, cpu.weight (100 = one task, range [1, 10000]),
// clamped to the range. The job weighs as many tasks as its quota has
// cores, all jobs together as many as the host has cores.
//
// Why: the scheduler weighs a cgroup as one entity against its siblings
// — on a hybrid host the cpu hierarchy's root, where every other process
// runs, each thread weighed as one task. At the kernel's default weight
// a job of any quota competed as a single thread, so a busy host starved
// a multi-threaded CLI that unsandboxed gets one share per thread (a
// traced Claude Code job at load 6 on 2 cores: 4010 ms at the default
// weight, 2964 ms with these, 3291 ms unsandboxed; docs/PERFORMANCE.md).
// A weight only orders contention; the quota still bounds what the job
// may use.
func cpuWeights(millicores int64, hostCPUs int, v2 bool) (job, parent int64) {
	unit, lo, hi := int64(1024), int64(2), int64(262144)
	if v2 {
		unit, lo, hi = 100, 1, 10000
	}
	return min(max(millicores*unit/1000, lo), hi), min(max(int64(hostCPUs)*unit, lo), hi)
}

// openV1Tasks opens the "tasks" file of every v1 job cgroup for PID 1 (the
// v2 leaf is joined at clone time with CLONE_INTO_CGROUP). PID 1 writes "0"
// to each before it builds the root, so it and everything it forks are
// inside the v1 limits before the command starts (compilePlan). The
// supervisor does not write PID 1's pid to cgroup.procs itself: moving another process takes the kernel's global
// threadgroup lock, whose RCU grace period cost 7–20 ms per run on a hybrid
// host (issue 8 performance); a thread moving itself does not.
func (cg *jobCgroups) openV1Tasks() ([]*os.File, error) {
	var out []*os.File
	for _, c := range slices.Sorted(maps.Keys(cg.v1)) {
		f, err := os.OpenFile(cg.v1[c]+"/tasks", os.O_WRONLY, 0)
		if err != nil {
			for _, g := range out {
				g.Close()
			}
			return nil, unavailable("cgroup_join", "joining the job cgroups", err)
		}
		out = append(out, f)
	}
	return out, nil
}

// kill kills every process in the job (cgroup.kill, Linux 5.14+).
func (cg *jobCgroups) kill() error { return writeFile(cg.leaf+"/cgroup.kill", "1") }

// waitEmpty polls cgroup.events until "populated 0" or the timeout; it
// reports whether the tree was verified empty.
func (cg *jobCgroups) waitEmpty(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for delay := 100 * time.Microsecond; ; delay = min(delay*2, 20*time.Millisecond) {
		b, err := os.ReadFile(cg.leaf + "/cgroup.events")
		if err == nil && strings.Contains(string(b), "populated 0") {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(delay)
	}
}

// observe reads limits and usage back from the kernel.
func (cg *jobCgroups) observe() Observed {
	var o Observed
	mem, pids, cpu := cg.dir("memory"), cg.dir("pids"), cg.dir("cpu")
	if cg.layout.useV2["memory"] {
		o.MemoryLimitBytes = readInt(mem + "/memory.max")
		o.MemoryPeakBytes = readInt(mem + "/memory.peak")
		o.OOMKills = readKey(mem+"/memory.events", "oom_kill")
	} else {
		o.MemoryLimitBytes = readInt(mem + "/memory.limit_in_bytes")
		o.MemoryPeakBytes = readInt(mem + "/memory.max_usage_in_bytes")
		o.OOMKills = readKey(mem+"/memory.oom_control", "oom_kill")
	}
	o.PidsMax = readInt(pids + "/pids.max")
	o.PidsLimitHits = readKey(pids+"/pids.events", "max")
	if cg.layout.useV2["cpu"] {
		f := strings.Fields(readString(cpu + "/cpu.max"))
		if len(f) == 2 {
			o.CPUQuotaMicros, _ = strconv.ParseInt(f[0], 10, 64)
			o.CPUPeriodMicros, _ = strconv.ParseInt(f[1], 10, 64)
		}
		o.CPUTimeNanos = readKey(cpu+"/cpu.stat", "usage_usec") * 1000
	} else {
		o.CPUQuotaMicros = readInt(cpu + "/cpu.cfs_quota_us")
		o.CPUPeriodMicros = readInt(cpu + "/cpu.cfs_period_us")
		if d, ok := cg.v1["cpuacct"]; ok {
			o.CPUTimeNanos = readInt(d + "/cpuacct.usage")
		}
	}
	return o
}

// remove deletes the job's cgroups (they must be empty).
func (cg *jobCgroups) remove() {
	for _, d := range cg.v1 {
		removeCgroup(d)
	}
	removeCgroup(cg.leaf)
}

// removeCgroup removes the empty cgroup directory p, retrying a failure
// for up to about 200 ms. A job cgroup left behind once its job root is
// gone is swept by nothing, and one CI run under load (load average 12)
// left a dead job's v1 memory cgroup after the sweep removed its other
// cgroups; the cause was not reproduced here (40 runs under a CPU
// burner), so the removal retries rather than giving up at the first
// refusal. Best effort, as every caller's teardown.
func removeCgroup(p string) {
	for i := 0; ; i++ {
		err := os.Remove(p)
		if err == nil || errors.Is(err, fs.ErrNotExist) || i == 10 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mkdirCgroup(p string) error {
	if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

func writeFile(p, v string) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(v)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(p), err)
	}
	return nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func readString(p string) string {
	b, _ := os.ReadFile(p)
	return strings.TrimSpace(string(b))
}

// readInt reads a number; "max" reads as -1.
func readInt(p string) int64 {
	s := readString(p)
	if s == "max" {
		return -1
	}
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}

// readKey reads "key value" from a flat-keyed cgroup file.
func readKey(p, key string) int64 {
	for _, line := range strings.Split(readString(p), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == key {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}
