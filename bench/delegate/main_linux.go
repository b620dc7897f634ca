// Command delegatebench measures issue 15's candidate-workspace targets in
// one run (Performance: "candidate workspace creation … against cp -a
// --reflink=auto and git worktree add in the same run"): it generates and
// commits a tree, then times (a) an overlayfs candidate view mounted in a
// fresh user namespace (the mount(2) call, and the whole helper process),
// (b) `cp -a --reflink=auto`, (c) `git worktree add --detach`, prints the
// ratios, and times candidate.Changes for a 10-file edit. Usage: run.sh.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	role := flag.String("role", "", "internal: helper role (mount or edit)")
	dirs := flag.String("dirs", "", "internal: lower,upper,work,merged for the helper")
	files := flag.Int("files", 20000, "files in the generated tree")
	ndirs := flag.Int("ndirs", 200, "directories in the generated tree")
	size := flag.Int("size", 10<<10, "bytes per file")
	mounts := flag.Int("mounts", 30, "overlay runs (median)")
	copies := flag.Int("copies", 3, "cp -a and git worktree runs each (median)")
	scans := flag.Int("scans", 50, "Changes runs (median)")
	base := flag.String("tmp", "", "directory for the tree (default: $TMPDIR)")
	flag.Parse()
	if *role != "" {
		os.Exit(helper(*role, strings.Split(*dirs, ",")))
	}
	root, err := os.MkdirTemp(*base, "delegatebench-")
	check(err)
	defer os.RemoveAll(root)
	fmt.Printf("load average at start: %s\n", loadavg())
	ws := filepath.Join(root, "ws")
	t0 := time.Now()
	check(generate(ws, *files, *ndirs, *size))
	fmt.Printf("tree: %d files in %d dirs, %d bytes each, generated and committed in %.1f s\n\n",
		*files, *ndirs, *size, time.Since(t0).Seconds())
	r := creation(root, ws, *mounts, *copies)
	r.print()
	scan(root, ws, *scans)
	fmt.Printf("\nload average at end: %s\n", loadavg())
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	check(err)
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "delegatebench:", err)
		os.Exit(1)
	}
}
