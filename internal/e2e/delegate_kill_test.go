package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/store"
)

// TestDelegateKill9 (issue 16 scope 6, test "kill -9 of coagent8
// mid-job"): a job that finished first stays admissible; a second job's
// real Claude Code, in the candidate sandbox, is mid-stream (the double
// holds the answer open) when the serving coagent8 gets SIGKILL. Then no
// process of the job survives (every descendant the server had, and every
// member of the sandbox's PID namespaces, is gone), a restarted coagent8
// reports the job failed job.supervisor_gone, the state database passes
// PRAGMA integrity_check, and the first job still admits.
func TestDelegateKill9(t *testing.T) {
	file := "/job/workspace/main.txt"
	edit := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "EDITED"}},
		providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": file}},
		providertest.ToolUse{Name: "Edit", Input: map[string]any{"file_path": file, "old_string": "old world", "new_string": "new world"}})
	slow := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: strings.Repeat("slow ", 600),
		Chunks: 600, ChunkDelay: 100 * time.Millisecond}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), edit.URL(), "")
	ws := gitWorkspace(t)
	var asked []string
	budget := map[string]any{"max_usd": 3, "max_minutes": 5}

	cs, _ := serve(t, environ, approving(&asked))
	first, res := callDelegate(t, cs, map[string]any{"task": "edit", "workspace_path": ws, "model": delegateModel, "wait": true, "budget": budget})
	if res.IsError || first["state"] != "succeeded" || !strings.Contains(fmt.Sprint(first["patch"]), "+hello new world") {
		t.Fatalf("first job = %v", first)
	}
	cs.Close()

	environ = withUpstream(environ, slow.URL())
	cs, server := serve(t, environ, approving(&asked))
	sc, res := callDelegate(t, cs, map[string]any{"task": "wait", "workspace_path": ws, "model": delegateModel, "budget": budget})
	if res.IsError || sc["state"] != "running" {
		t.Fatalf("second job = %v", sc)
	}
	id := fmt.Sprint(sc["job"])
	deadline := time.Now().Add(2 * time.Minute)
	for len(slow.Requests()) < 1 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if len(slow.Requests()) < 1 {
		t.Fatal("the agent never reached the model")
	}
	tree := jobTree(server.Process.Pid)
	hostNS := pidNS(os.Getpid())
	var sandboxNS []string
	for _, p := range tree {
		if p.ns != "" && p.ns != hostNS && !slices.Contains(sandboxNS, p.ns) {
			sandboxNS = append(sandboxNS, p.ns)
		}
	}
	if len(sandboxNS) == 0 || len(tree) < 2 {
		t.Fatalf("mid-job tree %v (host %s): want the sandbox's PID 1 and the CLI in their own PID namespace", tree, hostNS)
	}
	if err := server.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = server.Wait()
	// Death after SIGKILL is asynchronous; the bound is generous and the
	// check is not a race: a survivor fails it however fast the machine.
	var left []proc
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left = survivors(tree, sandboxNS)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Fatalf("after kill -9 of coagent8, processes of the job survive: %v", left)
	}

	cs, _ = serve(t, environ, approving(&asked))
	got, res := callDelegate(t, cs, map[string]any{"action": "status", "job": id, "workspace_path": ws})
	if res.IsError || got["state"] != "failed" || got["reason"] != job.ReasonSupervisorGone {
		t.Errorf("killed job after restart = %v, want failed %s", got, job.ReasonSupervisorGone)
	}
	if got, _ := callDelegate(t, cs, map[string]any{"action": "status", "job": first["job"], "workspace_path": ws}); got["state"] != "succeeded" ||
		got["digest"] != first["digest"] {
		t.Errorf("first job after restart = %v, want it unchanged", got)
	}
	cs.Close()
	integrity(t, filepath.Join(homeOf(environ), ".coagent8", "state.db"))
	cmd := exec.Command(binary, "admit", fmt.Sprint(first["job"]), "--workspace", ws)
	cmd.Env = environ
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("coagent8 admit of the first job: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "main.txt")); string(b) != "hello new world\n" {
		t.Errorf("main.txt after admit = %q", b)
	}
}

// serve starts the built server over MCP stdio (2025-11-25, elicitation)
// and returns the session and the server's process.
func serve(t *testing.T, environ []string, opts *mcp.ClientOptions) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary)
	cmd.Env = environ
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd
}

// withUpstream returns environ with the job double at upstream.
func withUpstream(environ []string, upstream string) []string {
	out := slices.DeleteFunc(slices.Clone(environ), func(e string) bool {
		return strings.HasPrefix(e, "COAGENT8_UNSAFE_LOOPBACK_UPSTREAM=")
	})
	return append(out, "COAGENT8_UNSAFE_LOOPBACK_UPSTREAM=anthropic="+upstream)
}

// proc is one process as /proc showed it: pid, start time (clock ticks
// since boot, which tells it from a reused pid), PID namespace, name.
type proc struct {
	pid   int
	start string
	ns    string
	comm  string
}

func (p proc) String() string { return fmt.Sprintf("%d(%s %s)", p.pid, p.comm, p.ns) }

// procStat reads pid's parent and start time from /proc/<pid>/stat.
func procStat(pid int) (ppid int, p proc, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, proc{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if i < 0 || len(f) < 20 {
		return 0, proc{}, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, proc{pid: pid, start: f[19], ns: pidNS(pid), comm: s[strings.IndexByte(s, '(')+1 : i]}, true
}

func pidNS(pid int) string {
	l, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	return l
}

func allPIDs() []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// jobTree returns every live descendant of root, with PID namespaces.
func jobTree(root int) []proc {
	children := map[int][]proc{}
	for _, pid := range allPIDs() {
		if ppid, p, ok := procStat(pid); ok {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []proc
	for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// survivors returns the processes of tree still alive (same pid and
// start time) and any process in one of the namespaces ns.
func survivors(tree []proc, ns []string) []proc {
	var out []proc
	for _, p := range tree {
		if _, q, ok := procStat(p.pid); ok && q.start == p.start {
			out = append(out, q)
		}
	}
	for _, pid := range allPIDs() {
		if _, q, ok := procStat(pid); ok && slices.Contains(ns, q.ns) && !slices.ContainsFunc(out, func(o proc) bool { return o.pid == pid }) {
			out = append(out, q)
		}
	}
	return out
}

// integrity runs PRAGMA integrity_check on the state database.
func integrity(t *testing.T, path string) {
	t.Helper()
	db, err := store.Open(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.SQL().QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity_check = %q, %v; want ok", res, err)
	}
}
