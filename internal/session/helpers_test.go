package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/store"
	"github.com/coagent8/coagent8/internal/turn"
)

// env is one state directory shared by the stores of a test.
type env struct {
	dir string
	db  string
}

func newEnv(t *testing.T) env {
	dir := t.TempDir()
	return env{dir: dir, db: filepath.Join(dir, "state.db")}
}

// open opens a store (a server instance) on the env's database.
func (e env) open(t *testing.T, o Options) *Store {
	t.Helper()
	db, err := store.Open(context.Background(), e.db, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	o.DB, o.LockDir = db, e.dir
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); db.Close() })
	return s
}

func workspace(t *testing.T) string {
	ws, err := turn.Workspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// run performs one whole turn: Begin, deltas, End.
func run(t *testing.T, s *Store, b turn.Begin, answer string, native string) turn.Lease {
	t.Helper()
	l, err := s.Begin(context.Background(), b)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	l.Delta(answer)
	if w := l.End(context.Background(), turn.End{NativeID: native, Status: turn.Completed, Output: answer, Model: "m"}); w != "" {
		t.Fatalf("end warning: %s", w)
	}
	return l
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatal("condition not reached in 5 s")
}
