package session

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/turn"
)

func TestContinuationUsesNativeIDAndTurnNumbers(t *testing.T) {
	s := newEnv(t).open(t, Options{})
	ws := workspace(t)
	l1 := run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "q1"}, "a1", "native-1")
	l2, err := s.Begin(context.Background(), turn.Begin{Handle: l1.Handle(), Workspace: ws, Backend: "claude", Prompt: "q2"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := []any{l2.Handle(), l2.NativeID(), l2.Turn()}, []any{l1.Handle(), "native-1", 2}; !cmp.Equal(got, want) {
		t.Fatalf("lease = %v, want %v", got, want)
	}
	l2.End(context.Background(), turn.End{Status: turn.Completed, Output: "a2"})
	info, err := s.Status(context.Background(), ws, l1.Handle())
	if err != nil {
		t.Fatal(err)
	}
	if info.State != "idle" || info.Turns != 2 || !info.ContinuationAvailable || info.LastTurn.Status != "completed" {
		t.Fatalf("status = %+v", info)
	}
}

func TestHandlesOfOtherWorkspacesBackendsOrAgeAreInvalid(t *testing.T) {
	s := newEnv(t).open(t, Options{IdleTTL: time.Hour})
	ws, other := workspace(t), workspace(t)
	h := run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "q"}, "a", "n").Handle()
	ctx := context.Background()
	tests := []struct {
		name string
		b    turn.Begin
	}{
		{"unknown", turn.Begin{Handle: turn.NewHandle(), Workspace: ws, Backend: "claude"}},
		{"malformed", turn.Begin{Handle: "../../etc/passwd", Workspace: ws, Backend: "claude"}},
		{"foreign workspace", turn.Begin{Handle: h, Workspace: other, Backend: "claude"}},
		{"other backend", turn.Begin{Handle: h, Workspace: ws, Backend: "codex"}},
	}
	for _, tt := range tests {
		if _, err := s.Begin(ctx, tt.b); !fault.HasCode(err, fault.SessionInvalid) {
			t.Errorf("%s: err = %v, want SESSION_INVALID", tt.name, err)
		}
	}
	s.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, err := s.Begin(ctx, turn.Begin{Handle: h, Workspace: ws, Backend: "claude"}); !fault.HasCode(err, fault.SessionInvalid) {
		t.Errorf("expired: err = %v", err)
	}
	if i, _ := s.Status(ctx, ws, h); i.State != "expired" {
		t.Errorf("expired state = %q", i.State)
	}
}

func TestWorkspaceIsolation(t *testing.T) {
	s := newEnv(t).open(t, Options{})
	a, b := workspace(t), workspace(t)
	h := run(t, s, turn.Begin{Workspace: a, Backend: "claude", Prompt: "secret plan"}, "answer", "n").Handle()
	ctx := context.Background()
	if l, err := s.List(ctx, b); err != nil || len(l) != 0 {
		t.Fatalf("list from B = %v, %v", l, err)
	}
	if l, _ := s.List(ctx, a); len(l) != 1 || l[0].Handle != h {
		t.Fatalf("list from A = %v", l)
	}
	_, errH := s.History(ctx, b, h, "", 0)
	_, errS := s.Status(ctx, b, h)
	_, errR := s.Result(ctx, b, h, 0)
	_, errC := s.Cancel(ctx, b, h)
	errX := s.CloseSession(ctx, b, h, true)
	_, errU := s.Status(ctx, b, turn.NewHandle())
	for i, err := range []error{errH, errS, errR, errC, errX, errU} {
		fe := fault.From(err)
		if fe == nil || fe.Code != fault.SessionInvalid || fe.Message != errInvalid.Message {
			t.Errorf("call %d from B: %v, want the same SESSION_INVALID as an unknown handle", i, err)
		}
	}
}

func TestSecondConcurrentTurnIsBusyAtOnce(t *testing.T) {
	e := newEnv(t)
	s1, s2 := e.open(t, Options{}), e.open(t, Options{})
	ws := workspace(t)
	h := run(t, s1, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "q"}, "a", "n").Handle()
	l, err := s1.Begin(context.Background(), turn.Begin{Handle: h, Workspace: ws, Backend: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Store{s1, s2} { // same process, and another live instance
		start := time.Now()
		_, err := s.Begin(context.Background(), turn.Begin{Handle: h, Workspace: ws, Backend: "claude"})
		if !fault.HasCode(err, fault.SessionBusy) || time.Since(start) > 200*time.Millisecond {
			t.Fatalf("second turn: %v after %v, want SESSION_BUSY at once", err, time.Since(start))
		}
	}
	if err := s2.CloseSession(context.Background(), ws, h, false); !fault.HasCode(err, fault.SessionBusy) {
		t.Fatalf("close while busy: %v", err)
	}
	l.End(context.Background(), turn.End{Status: turn.Completed})
	if _, err := s2.Begin(context.Background(), turn.Begin{Handle: h, Workspace: ws, Backend: "claude"}); err != nil {
		t.Fatalf("after end: %v", err)
	}
}

func TestConcurrentBeginsGrantOneLease(t *testing.T) {
	e := newEnv(t)
	stores := []*Store{e.open(t, Options{}), e.open(t, Options{})}
	ws := workspace(t)
	h := run(t, stores[0], turn.Begin{Workspace: ws, Backend: "claude", Prompt: "q"}, "a", "n").Handle()
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted, busy := 0, 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(s *Store) {
			defer wg.Done()
			_, err := s.Begin(context.Background(), turn.Begin{Handle: h, Workspace: ws, Backend: "claude"})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				granted++
			} else if fault.HasCode(err, fault.SessionBusy) {
				busy++
			} else {
				t.Errorf("begin: %v", err)
			}
		}(stores[i%2])
	}
	wg.Wait()
	if granted != 1 || busy != 7 {
		t.Fatalf("granted %d, busy %d; want 1 and 7", granted, busy)
	}
}

func TestModeAutoReusesAndNoneKeepsNothing(t *testing.T) {
	s := newEnv(t).open(t, Options{})
	ws := workspace(t)
	h := run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "q"}, "a", "n").Handle()
	l := run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Mode: "auto", Prompt: "q"}, "a", "n")
	if l.Handle() != h || l.Turn() != 2 {
		t.Fatalf("auto: handle %s turn %d, want %s turn 2", l.Handle(), l.Turn(), h)
	}
	l = run(t, s, turn.Begin{Workspace: ws, Backend: "codex", Mode: "auto", Prompt: "q"}, "a", "n")
	if l.Handle() == h {
		t.Fatal("auto reused a session of another backend")
	}
	n := run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Mode: "none", Prompt: "q"}, "a", "n")
	if n.Handle() != "" {
		t.Fatal("mode none made a session")
	}
	if l, _ := s.List(context.Background(), ws); len(l) != 2 {
		t.Fatalf("list = %d sessions, want 2", len(l))
	}
}

func TestCloseRefusesFurtherTurnsAndCanDeleteHistory(t *testing.T) {
	s := newEnv(t).open(t, Options{})
	ws := workspace(t)
	h := run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "q"}, "a", "n").Handle()
	ctx := context.Background()
	if err := s.CloseSession(ctx, ws, h, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Begin(ctx, turn.Begin{Handle: h, Workspace: ws, Backend: "claude"}); !fault.HasCode(err, fault.SessionInvalid) {
		t.Fatalf("turn on closed session: %v", err)
	}
	p, err := s.History(ctx, ws, h, "", 0)
	if err != nil || len(p.Events) != 0 || !p.Complete {
		t.Fatalf("history after delete = %+v, %v", p, err)
	}
}

func TestHistoryIsRedacted(t *testing.T) {
	s := newEnv(t).open(t, Options{})
	ws := workspace(t)
	key := "sk-ant-api03-" + strings.Repeat("K", 90)
	l, err := s.Begin(context.Background(), turn.Begin{Workspace: ws, Backend: "claude", Prompt: "my key is " + key})
	if err != nil {
		t.Fatal(err)
	}
	l.Delta("echo " + key)
	l.End(context.Background(), turn.End{Status: turn.Failed})
	p, _ := s.History(context.Background(), ws, l.Handle(), "", 0)
	if len(p.Events) != 2 {
		t.Fatalf("events = %+v", p.Events)
	}
	for _, ev := range p.Events {
		if strings.Contains(ev.Text, "KKKKKKKK") {
			t.Fatalf("secret in history: %q", ev.Text)
		}
	}
	if !p.Events[1].Partial {
		t.Fatal("failed turn's streamed text not marked partial")
	}
}
