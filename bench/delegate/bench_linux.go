package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/coagent8/coagent8/internal/candidate"
)

// result holds the medians of one creation run.
type result struct {
	mount, helper, volatile, cp, worktree time.Duration
}

// creation times the three ways of making a candidate copy of ws.
func creation(root, ws string, mounts, copies int) result {
	var r result
	var ms, hs, vs []time.Duration
	for i := range mounts {
		m, h := mountOnce(root, "mount", i)
		ms, hs = append(ms, m), append(hs, h)
		_, v := mountOnce(root, "volatile", i)
		vs = append(vs, v)
	}
	r.mount, r.helper, r.volatile = median(ms), median(hs), median(vs)
	r.cp = median(timeRuns(copies, func(i int) error {
		return run("cp", "-a", "--reflink=auto", ws, filepath.Join(root, fmt.Sprintf("cp%d", i)))
	}, func(i int) error { return os.RemoveAll(filepath.Join(root, fmt.Sprintf("cp%d", i))) }))
	r.worktree = median(timeRuns(copies, func(i int) error {
		return git(ws, "worktree", "add", "-q", "--detach", filepath.Join(root, fmt.Sprintf("wt%d", i)), "HEAD")
	}, func(i int) error {
		return git(ws, "worktree", "remove", "--force", filepath.Join(root, fmt.Sprintf("wt%d", i)))
	}))
	return r
}

// mountOnce runs one helper of role in fresh overlay directories and
// returns the mount(2) time it reports and the whole process's wall time.
func mountOnce(root, role string, i int) (time.Duration, time.Duration) {
	name := fmt.Sprintf("%s%03d", role, i)
	d := overlayDirs(root, name)
	t0 := time.Now()
	out, err := helperCmd(role, d...).Output()
	h := time.Since(t0)
	check(err)
	m, err := parseMount(out)
	check(err)
	check(os.RemoveAll(filepath.Join(root, name)))
	return m, h
}

// overlayDirs makes fresh upper, work and merged directories under root/name and
// returns lower (the tree), upper, work and merged.
func overlayDirs(root, name string) []string {
	d := []string{filepath.Join(root, "ws")}
	for _, s := range []string{"upper", "work", "merged"} {
		p := filepath.Join(root, name, s)
		check(os.MkdirAll(p, 0o755))
		d = append(d, p)
	}
	return d
}

// timeRuns times f n times, running the untimed cleanup after each.
func timeRuns(n int, f, cleanup func(int) error) []time.Duration {
	var ds []time.Duration
	for i := range n {
		t0 := time.Now()
		check(f(i))
		ds = append(ds, time.Since(t0))
		check(cleanup(i))
	}
	return ds
}

func (r result) print() {
	fmt.Printf("candidate view, mount(2) only      median %10.2f ms\n", msec(r.mount))
	fmt.Printf("candidate view, whole helper       median %10.2f ms  (re-exec + user/mount ns + mount + stat)\n", msec(r.helper))
	fmt.Printf("candidate view, helper, volatile   median %10.2f ms  (same, -o volatile: no syncfs of the host fs at teardown)\n", msec(r.volatile))
	fmt.Printf("cp -a --reflink=auto               median %10.2f ms\n", msec(r.cp))
	fmt.Printf("git worktree add --detach          median %10.2f ms\n\n", msec(r.worktree))
	fmt.Printf("cp / mount           %8.0fx   cp / helper       %6.1fx  (target >= 100x)\n", ratio(r.cp, r.mount), ratio(r.cp, r.helper))
	fmt.Printf("worktree / mount     %8.0fx   worktree / helper %6.1fx  (target >= 100x)\n", ratio(r.worktree, r.mount), ratio(r.worktree, r.helper))
	fmt.Printf("cp / volatile helper %8.1fx   worktree / volatile helper %6.1fx\n", ratio(r.cp, r.volatile), ratio(r.worktree, r.volatile))
}

// scan makes the 10-file edit in a candidate view and times Changes.
func scan(root, ws string, n int) {
	d := overlayDirs(root, "edit")
	out, err := helperCmd("edit", d...).Output()
	check(err)
	_, err = parseMount(out)
	check(err)
	var got []candidate.Change
	ds := timeRuns(n, func(int) error {
		var err error
		got, err = candidate.Changes(ws, d[1])
		return err
	}, func(int) error { return nil })
	kinds := map[candidate.Kind]int{}
	for _, c := range got {
		kinds[c.Kind]++
	}
	fmt.Printf("\nChanges() after the 10-file edit   median %10.3f ms  max %.3f ms over %d runs (target < 20 ms)\n",
		msec(median(ds)), msec(slices.Max(ds)), n)
	fmt.Printf("  %d changes: %d added, %d modified, %d deleted (pkg007's lower files are each deleted)\n",
		len(got), kinds[candidate.Added], kinds[candidate.Modified], kinds[candidate.Deleted])
}

func run(name string, args ...string) error {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, out)
	}
	return nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func msec(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
