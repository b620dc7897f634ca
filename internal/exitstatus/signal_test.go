//go:build unix

package exitstatus

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

func TestNotifyContextNamesTheSignal(t *testing.T) {
	ctx, stop := NotifyContext(context.Background(), syscall.SIGUSR1)
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the signal did not cancel the context")
	}
	if got, want := SignalStatus(ctx), 128+int(syscall.SIGUSR1); got != want {
		t.Errorf("SignalStatus = %d, want %d (cause %v)", got, want, context.Cause(ctx))
	}
}

func TestNotifyContextStopIsNoSignal(t *testing.T) {
	ctx, stop := NotifyContext(context.Background(), syscall.SIGUSR2)
	stop()
	stop() // idempotent
	<-ctx.Done()
	if got := SignalStatus(ctx); got != 0 || !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("after stop: SignalStatus %d, cause %v; want 0, Canceled", got, context.Cause(ctx))
	}
}
