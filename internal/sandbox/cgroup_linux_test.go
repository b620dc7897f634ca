//go:build linux && amd64

package sandbox

import (
	"bytes"
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
