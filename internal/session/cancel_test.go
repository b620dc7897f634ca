package session

import (
	"context"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/turn"
)

// running starts a turn whose "backend" ends as cancelled when its context
// is cancelled, like a real adapter tearing its process tree down.
func running(t *testing.T, s *Store, ws string) turn.Lease {
	ctx, cancel := context.WithCancelCause(context.Background())
	l, err := s.Begin(ctx, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "q", Cancel: cancel})
	if err != nil {
		t.Fatal(err)
	}
	l.Delta("streaming…")
	go func() {
		<-ctx.Done()
		l.End(context.Background(), turn.End{Status: turn.Cancelled, ErrCode: string(fault.Aborted), Reason: "turn.cancelled"})
	}()
	return l
}

func TestCancelRunningFinishedAndFromAnotherInstance(t *testing.T) {
	e := newEnv(t)
	s1, s2 := e.open(t, Options{}), e.open(t, Options{})
	ws := workspace(t)
	ctx := context.Background()
	tests := []struct {
		name  string
		owner *Store
		by    *Store
	}{
		{"same process", s1, s1},
		{"another server instance", s1, s2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := running(t, tt.owner, ws)
			got, err := tt.by.Cancel(ctx, ws, l.Handle())
			if err != nil || !got.Cancelled {
				t.Fatalf("cancel = %+v, %v", got, err)
			}
			info, _ := tt.by.Status(ctx, ws, l.Handle())
			if info.State != "idle" || info.LastTurn.Status != "cancelled" {
				t.Fatalf("status after cancel = %+v", info)
			}
			again, err := tt.by.Cancel(ctx, ws, l.Handle())
			if err != nil || again.Cancelled || again.Message == "" {
				t.Fatalf("cancel of a finished turn = %+v, %v; want a clear no-op", again, err)
			}
		})
	}
}
