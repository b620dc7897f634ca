//go:build linux

package job

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// treeWait bounds how long recovery waits for a killed survivor of a
// job's tree to disappear from /proc.
const treeWait = 5 * time.Second

// treeProcs returns the live processes of job id's sandbox: those whose
// mount namespace holds the job's candidate overlay, whose upper layer
// is <candidate dir>/<id>/upper (the governor names it so; job ids are
// 24 random hex digits, so the suffix names one job). Every process of
// the sandbox's PID namespace shares that mount namespace. Mount
// namespaces are read once each.
func treeProcs(id string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	suffix := "/" + id + "/upper"
	seen := map[string]bool{} // mount namespace → holds the overlay
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ns, err := os.Readlink("/proc/" + e.Name() + "/ns/mnt")
		if err != nil {
			continue // exited, or a kernel thread
		}
		has, ok := seen[ns]
		if !ok {
			has = holdsUpper("/proc/"+e.Name()+"/mountinfo", suffix)
			seen[ns] = has
		}
		if has {
			pids = append(pids, pid)
		}
	}
	return pids
}

// holdsUpper reports whether the mount table at path has an overlay whose
// upperdir ends in suffix.
func holdsUpper(path, suffix string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		_, rest, ok := strings.Cut(sc.Text(), " - overlay ")
		if !ok {
			continue
		}
		for _, opt := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(opt, "upperdir="); ok && strings.HasSuffix(v, suffix) {
				return true
			}
		}
	}
	return false
}

// endTree kills what survives of job id's tree and reports whether none
// is left. The kernel already ends the tree with its supervisor (the
// sandbox's PID 1 has a parent-death SIGKILL, and its PID namespace dies
// with it); this is the check, and the fallback if a survivor is found.
func endTree(id string) bool {
	deadline := time.Now().Add(treeWait)
	for {
		pids := treeProcs(id)
		if len(pids) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
