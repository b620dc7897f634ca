package exitstatus

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Interrupted is the cause of a context that [NotifyContext] cancelled:
// the signal coagent8 received.
type Interrupted struct{ Signal os.Signal }

func (i Interrupted) Error() string { return i.Signal.String() + " signal received" }

// NotifyContext is signal.NotifyContext whose cause (context.Cause) is an
// [Interrupted] naming the signal, so a command can exit 128+N as a shell
// would. The first signal cancels; stop releases the signal handling.
func NotifyContext(parent context.Context, signals ...os.Signal) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, signals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(Interrupted{Signal: s})
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel(context.Canceled)
		})
	}
}

// SignalStatus is 128+N when ctx was cancelled by signal N through
// [NotifyContext], else 0.
func SignalStatus(ctx context.Context) int {
	if i, ok := context.Cause(ctx).(Interrupted); ok {
		if s, ok := i.Signal.(syscall.Signal); ok {
			return 128 + int(s)
		}
	}
	return 0
}
