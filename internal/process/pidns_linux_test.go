package process

import (
	"context"
	"os"
	"syscall"
	"testing"
)

// Linux only: the namespace fallback flag lives in pidns_linux.go.
func TestProcessGroupWhenNamespacesAreRefused(t *testing.T) {
	noIsolation()
	t.Cleanup(func() { refused.Store(false) })
	p, err := Start(context.Background(), Spec{Path: "/bin/cat", Stdin: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	if got := p.Containment(); got != "process-group" {
		t.Fatalf("containment = %q, want process-group", got)
	}
	if !isolationRefused(syscall.EPERM) || isolationRefused(os.ErrNotExist) {
		t.Fatal("isolationRefused misclassifies")
	}
}
