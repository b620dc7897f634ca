package session

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/store"
	"github.com/coagent8/coagent8/internal/turn"
)

// helperVar re-executes the test binary as a helper process (a server
// instance that crashes, or a process holding the database lock).
const helperVar = "SESSION_TEST_HELPER"

func TestMain(m *testing.M) {
	if h := os.Getenv(helperVar); h != "" {
		helper(h)
		return
	}
	os.Exit(m.Run())
}

func helper(spec string) {
	parts := strings.SplitN(spec, "|", 4) // mode|dir|handle|workspace
	ctx := context.Background()
	db, err := store.Open(ctx, parts[1]+"/state.db", 0)
	if err != nil {
		panic(err)
	}
	switch parts[0] {
	case "crash":
		s, err := Open(ctx, Options{DB: db, LockDir: parts[1], FlushEvery: 20 * time.Millisecond})
		if err != nil {
			panic(err)
		}
		l, err := s.Begin(ctx, turn.Begin{Handle: parts[2], Workspace: parts[3], Backend: "claude", Prompt: "turn two"})
		if err != nil {
			panic(err)
		}
		l.Delta("partial answer before the crash")
		// Ready only once the flusher wrote the chunk: a fixed sleep lost
		// the race under load (CI saw the history without the partial).
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			var n int
			_ = db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM deltas WHERE handle = ? AND turn = ?`, parts[2], l.Turn()).Scan(&n)
			if n > 0 || time.Now().After(deadline) {
				break
			}
		}
	case "lock":
		conn, _ := db.SQL().Conn(ctx)
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			panic(err)
		}
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
}

// startHelper runs a helper and waits for its "ready" line.
func startHelper(t *testing.T, spec string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperVar+"="+spec)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("helper said %q", line)
	}
	return cmd
}

// A server killed with SIGKILL mid-turn leaves a lease that the next
// instance recovers: the turn is failed/server_exit, what it streamed is
// kept as partial, earlier turns are intact, and the session continues.
func TestKilledServerTurnIsRecoveredAsServerExit(t *testing.T) {
	e := newEnv(t)
	s := e.open(t, Options{})
	ws := workspace(t)
	h := run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "turn one"}, "answer one", "native-1").Handle()
	child := startHelper(t, "crash|"+e.dir+"|"+h+"|"+ws)
	if _, err := s.Begin(context.Background(), turn.Begin{Handle: h, Workspace: ws, Backend: "claude"}); !fault.HasCode(err, fault.SessionBusy) {
		t.Fatalf("while the other server runs the turn: %v, want SESSION_BUSY", err)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()

	fresh := e.open(t, Options{}) // startup recovery
	var status, reason string
	fresh.db.QueryRow("SELECT status, reason FROM turns WHERE handle = ? AND turn = 2", h).Scan(&status, &reason)
	if status != "failed" || reason != ReasonServerExit {
		t.Fatalf("turn 2 = %s/%s, want failed/server_exit", status, reason)
	}
	p, err := fresh.History(context.Background(), ws, h, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, ev := range p.Events {
		texts = append(texts, ev.Role+":"+ev.Text)
	}
	want := "user:turn one|assistant:answer one|user:turn two|assistant:partial answer before the crash"
	if got := strings.Join(texts, "|"); got != want {
		t.Fatalf("history = %q, want %q", got, want)
	}
	l, err := fresh.Begin(context.Background(), turn.Begin{Handle: h, Workspace: ws, Backend: "claude"})
	if err != nil || l.NativeID() != "native-1" || l.Turn() != 3 {
		t.Fatalf("continue after recovery: %v", err)
	}
}

// A database whose write lock another process holds does not stop a turn:
// it runs unarchived and End warns (issue 6 bad input).
func TestLockedDatabaseDegradesToAWarning(t *testing.T) {
	e := newEnv(t)
	s := e.open(t, Options{})
	ws := workspace(t)
	h := run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "q"}, "a", "native-1").Handle()
	startHelper(t, "lock|"+e.dir+"||")
	for _, handle := range []string{"", h} {
		l, err := s.Begin(context.Background(), turn.Begin{Handle: handle, Workspace: ws, Backend: "claude", Prompt: "q"})
		if err != nil {
			t.Fatalf("begin %q on a locked database: %v", handle, err)
		}
		if handle != "" && l.NativeID() != "native-1" {
			t.Fatal("degraded lease lost the native id")
		}
		if w := l.End(context.Background(), turn.End{Status: turn.Completed, Output: "answer"}); w != warnUnavailable {
			t.Fatalf("warning = %q", w)
		}
	}
}

// A full database (max_page_count) keeps answering: the end of a big
// answer cannot be archived, End warns, and the lease is still free.
func TestFullDiskWarnsAndReleasesTheLease(t *testing.T) {
	e := newEnv(t)
	s := e.open(t, Options{})
	s.db.SetMaxOpenConns(1) // max_page_count is per connection
	ws := workspace(t)
	h := run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "q"}, "a", "n").Handle()
	var pages int
	s.db.QueryRow("PRAGMA page_count").Scan(&pages)
	if _, err := s.db.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", pages+2)); err != nil {
		t.Fatal(err)
	}
	l, err := s.Begin(context.Background(), turn.Begin{Handle: h, Workspace: ws, Backend: "claude", Prompt: "q"})
	if err != nil {
		t.Fatal(err)
	}
	w := l.End(context.Background(), turn.End{Status: turn.Completed, Output: strings.Repeat("z", 200_000)})
	if w != warnEndFailed {
		t.Fatalf("warning = %q", w)
	}
	if _, err := s.Begin(context.Background(), turn.Begin{Handle: h, Workspace: ws, Backend: "claude", Prompt: strings.Repeat("p", 200_000)}); err != nil {
		t.Fatalf("next turn on a full disk: %v", err)
	}
}

// A corrupted database refuses to open with its path, and is not touched.
func TestCorruptedDatabaseRefusesWithPathAndKeepsTheFile(t *testing.T) {
	e := newEnv(t)
	garbage := []byte(strings.Repeat("not a database ", 500))
	os.WriteFile(e.db, garbage, 0o600)
	_, err := store.Open(context.Background(), e.db, 0)
	if err == nil || !strings.Contains(err.Error(), e.db) {
		t.Fatalf("err = %v, want a refusal naming %s", err, e.db)
	}
	if b, _ := os.ReadFile(e.db); string(b) != string(garbage) {
		t.Fatal("the corrupted file was modified")
	}
}
