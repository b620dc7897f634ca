//go:build unix

package process

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
)

// TestMain lets the test binary act as the misbehaving CLI (re-exec, as
// go-sdk's _MCP_RUN_AS_SERVER does).
func TestMain(m *testing.M) {
	switch os.Getenv("PROCESS_TEST_ROLE") {
	case "parent":
		runParent()
		return
	case "grandchild":
		runGrandchild()
		return
	}
	os.Exit(m.Run())
}

// runParent starts a grandchild in a new session that ignores SIGTERM,
// then ignores SIGTERM itself and sleeps.
func runParent() {
	signal.Ignore(syscall.SIGTERM)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PROCESS_TEST_ROLE=grandchild")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		os.Exit(9)
	}
	// "ready" only once the whole tree is up: a loaded host (or a race
	// build) can take longer to start the grandchild than the deadline
	// and idle tests give the tree, and those tests must see it whole.
	// Meanwhile a "wait" line every 50 ms keeps the idle timer quiet.
	for i := 0; i < 600; i++ {
		if b, _ := os.ReadFile(os.Getenv("PROCESS_TEST_PIDFILE")); len(b) > 0 {
			break
		}
		fmt.Println("wait")
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
}

func runGrandchild() {
	signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
	// Report the host-visible pid: /proc/self in a child pid namespace
	// shows the namespace pid, so the parent test reads NSpid instead.
	_ = os.WriteFile(os.Getenv("PROCESS_TEST_PIDFILE"), []byte(hostPid()), 0o600)
	time.Sleep(time.Hour)
}

// hostPid returns the outermost pid from /proc/self/status NSpid.
func hostPid() string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if f, ok := strings.CutPrefix(line, "NSpid:"); ok {
			return strings.Fields(f)[0]
		}
	}
	return strconv.Itoa(os.Getpid())
}

func startTree(t *testing.T, ctx context.Context, s Spec) (*Proc, int) {
	t.Helper()
	pidfile := filepath.Join(t.TempDir(), "gc.pid")
	self, _ := os.Executable()
	s.Path = self
	s.Env = append(os.Environ(), "PROCESS_TEST_ROLE=parent", "PROCESS_TEST_PIDFILE="+pidfile)
	p, err := Start(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	lines := NewLines(p.Stdout(), 1024)
	line, err := lines.Next()
	for err == nil && string(line) == "wait" {
		p.Touch() // as the adapters do for every line read
		line, err = lines.Next()
	}
	if err != nil || string(line) != "ready" {
		t.Fatalf("parent did not start: %q %v (stderr %q)", line, err, p.Stderr())
	}
	var gc int
	for i := 0; i < 500 && gc == 0; i++ {
		b, _ := os.ReadFile(pidfile)
		gc, _ = strconv.Atoi(string(b))
		time.Sleep(5 * time.Millisecond)
	}
	if gc == 0 {
		t.Fatal("grandchild pid never written")
	}
	if !alive(gc) {
		t.Fatalf("grandchild %d not alive before teardown", gc)
	}
	return p, gc
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z' && s[i+2] != 'X'
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for i := 0; i < 400; i++ {
		if !alive(pid) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d survived teardown", pid)
}

func TestCancelKillsWholeTree(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p, gc := startTree(t, ctx, Spec{})
	if got := p.Containment(); got != "pid-namespace" {
		t.Fatalf("containment = %q, want pid-namespace on this host", got)
	}
	cancel()
	_, why := p.Wait()
	if why != EndCanceled {
		t.Fatalf("end = %v, want EndCanceled", why)
	}
	waitGone(t, gc)
}

func TestDeadlineKillsWholeTree(t *testing.T) {
	p, gc := startTree(t, context.Background(), Spec{Deadline: 3 * time.Second})
	_, why := p.Wait()
	if why != EndDeadline {
		t.Fatalf("end = %v, want EndDeadline", why)
	}
	waitGone(t, gc)
}

func TestIdleTimeoutKillsWholeTree(t *testing.T) {
	p, gc := startTree(t, context.Background(), Spec{IdleTimeout: 2 * time.Second})
	_, why := p.Wait()
	if why != EndIdle {
		t.Fatalf("end = %v, want EndIdle", why)
	}
	waitGone(t, gc)
}

func TestKillIsImmediate(t *testing.T) {
	p, gc := startTree(t, context.Background(), Spec{})
	p.Kill()
	waitGone(t, gc)
}

func TestStdinIsWrittenThenClosed(t *testing.T) {
	p, err := Start(context.Background(), Spec{Path: "/bin/cat", Stdin: []byte("hello\nworld")})
	if err != nil {
		t.Fatal(err)
	}
	l := NewLines(p.Stdout(), 64)
	var got []string
	for {
		rec, err := l.Next()
		if err != nil {
			break
		}
		got = append(got, string(rec))
	}
	if code, _ := p.Wait(); code != 0 {
		t.Fatalf("cat exit %d", code)
	}
	if strings.Join(got, "|") != "hello|world" {
		t.Fatalf("got %q", got)
	}
}

func TestLinesRejectsOversizeRecord(t *testing.T) {
	l := NewLines(strings.NewReader(strings.Repeat("x", 200)+"\nok\n"), 100)
	if _, err := l.Next(); !fault.HasCode(err, fault.BufferLimit) {
		t.Fatalf("err = %v, want BUFFER_LIMIT", err)
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "claude")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	noexec := filepath.Join(dir, "noexec")
	os.WriteFile(noexec, []byte(""), 0o644)
	tests := []struct {
		name string
		env  []string
		want string
		code fault.Code
	}{
		{"path", []string{"PATH=relative:" + dir}, exe, ""},
		{"override", []string{"PATH=/nonexistent", "CLAUDE_PATH=" + exe}, exe, ""},
		{"override relative", []string{"CLAUDE_PATH=claude"}, "", fault.CLINotFound},
		{"override not executable", []string{"CLAUDE_PATH=" + noexec, "PATH=" + dir}, "", fault.CLINotFound},
		{"missing", []string{"PATH=/nonexistent"}, "", fault.CLINotFound},
		{"repeated entries", []string{"PATH=/nonexistent:/nonexistent/:" + dir}, exe, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, searched, err := Resolve(config.FromList(tt.env), "claude", "CLAUDE_PATH")
			if tt.code != "" {
				if !fault.HasCode(err, tt.code) || len(searched) == 0 {
					t.Fatalf("err = %v searched %v, want %s", err, searched, tt.code)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Resolve = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestEnvironIsAllowlist(t *testing.T) {
	env := config.FromList([]string{"PATH=/bin", "HOME=/h", "ANTHROPIC_API_KEY=x", "AWS_SECRET_ACCESS_KEY=y", "CLAUDE_CONFIG_DIR=/c", "ANTHROPIC_DEFAULT_SONNET_MODEL=m"})
	got := strings.Join(Environ(env, []string{"CLAUDE_CONFIG_DIR", "ANTHROPIC_DEFAULT_*"}, map[string]string{"X": "1"}), " ")
	want := "ANTHROPIC_DEFAULT_SONNET_MODEL=m CLAUDE_CONFIG_DIR=/c COAGENT8_TURN=1 HOME=/h PATH=/bin X=1"
	if got != want {
		t.Fatalf("Environ = %q\nwant %q", got, want)
	}
}

// TestNotFoundNamesTheRemedy: a CLI not found says how to fix it, on
// every surface that resolves it (consult, review, delegate, doctor):
// install it on PATH or set its override variable. A name without an
// override variable (git) gets the searched list only.
func TestNotFoundNamesTheRemedy(t *testing.T) {
	env := config.FromList([]string{"PATH=/nonexistent"})
	tests := []struct {
		name      string
		overrides []string
		want      string
	}{
		{"claude", []string{"CLAUDE_PATH"}, "claude CLI not found; searched: /nonexistent/claude; install it on PATH or set CLAUDE_PATH to its absolute path"},
		{"agy", []string{"AGY_PATH", "GEMINI_PATH"}, "agy CLI not found; searched: /nonexistent/agy; install it on PATH or set AGY_PATH to its absolute path"},
		{"git", nil, "git CLI not found; searched: /nonexistent/git"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Resolve(env, tt.name, tt.overrides...)
			if got := fault.From(err).Message; !strings.HasPrefix(got, tt.want) || (tt.overrides == nil && got != tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
