// Command sandboxbench measures, in one run, the median wall time of
// `coagent8 sandbox run -- /usr/bin/true` against bare exec, bwrap with an
// equivalent policy, Anthropic's srt and `codex sandbox`, and prints the
// ratios (issue 8 "Performance"). Usage: see run.sh.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

type contender struct {
	name string
	argv []string
}

func main() {
	c8 := flag.String("coagent8", "", "coagent8 binary")
	tools := flag.String("tools", "", "directory with srt and codex (node_modules/.bin)")
	n := flag.Int("n", 30, "runs per contender")
	flag.Parse()
	ws, err := os.MkdirTemp("", "sandboxbench-")
	check(err)
	defer os.RemoveAll(ws)
	settings := filepath.Join(ws, "srt-settings.json")
	check(os.WriteFile(settings, []byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["`+ws+`"],"denyWrite":[]}}`), 0o644))
	cs := []contender{
		{"bare exec", []string{"/usr/bin/true"}},
		{"bwrap (all namespaces)", bwrapArgv(ws)},
		{"coagent8 sandbox run", []string{*c8, "sandbox", "run", "--quiet", "--", "/usr/bin/true"}},
		{"srt", []string{filepath.Join(*tools, "srt"), "-s", settings, "/usr/bin/true"}},
		{"codex sandbox", []string{filepath.Join(*tools, "codex"), "sandbox", "--", "/usr/bin/true"}},
	}
	med := medians(cs, *n)
	for _, c := range cs {
		fmt.Printf("%-24s median %8.2f ms\n", c.name, ms(med[c.name]))
	}
	ours := med["coagent8 sandbox run"]
	fmt.Printf("\ncoagent8 / bwrap        %6.2fx (target <= 1.5x)\n", ratio(ours, med["bwrap (all namespaces)"]))
	fmt.Printf("srt / coagent8          %6.2fx (target >= 10x)\n", ratio(med["srt"], ours))
	fmt.Printf("codex sandbox / coagent8 %5.2fx (target >= 10x)\n", ratio(med["codex sandbox"], ours))
	fmt.Printf("coagent8 / bare exec    %6.2fx\n", ratio(ours, med["bare exec"]))
}

// bwrapArgv is the closest bwrap policy to ours: every namespace, a fresh
// root of read-only system binds, a fresh /proc and /dev, private /tmp, the
// workspace writable, cleared environment, no capabilities, new session.
func bwrapArgv(ws string) []string {
	a := []string{"bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/job/scratch",
		"--ro-bind", "/usr", "/usr"}
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib64"} {
		if t, err := os.Readlink(d); err == nil {
			a = append(a, "--symlink", t, d)
		} else if _, err := os.Stat(d); err == nil {
			a = append(a, "--ro-bind", d, d)
		}
	}
	return append(a, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		"--bind", ws, "/job/workspace", "--chdir", "/job/workspace", "/usr/bin/true")
}

// medians runs every contender n times, interleaved round by round so that
// load changes on a shared host hit all of them alike, after one warm-up
// run each (which also auto-qualifies coagent8), and returns the medians.
func medians(cs []contender, n int) map[string]time.Duration {
	ds := map[string][]time.Duration{}
	for _, c := range cs {
		run(c)
	}
	for range n {
		for _, c := range cs {
			start := time.Now()
			run(c)
			ds[c.name] = append(ds[c.name], time.Since(start))
		}
	}
	med := map[string]time.Duration{}
	for name, d := range ds {
		slices.Sort(d)
		med[name] = d[len(d)/2]
	}
	return med
}

func run(c contender) {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "%s failed: %v\n%s\n", c.name, err, strings.TrimSpace(string(out)))
		os.Exit(1)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
