//go:build linux

package gate

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/secret"
)

// TestCredentialFieldFromFIFO: gate.credentials "file:PATH#field" naming
// a FIFO is a *secret.BindingError saying it is not a regular file (its
// open blocked every forward for good), naming the reference. The bound
// is a hang detector, far above a stat's time on any machine.
func TestCredentialFieldFromFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "credentials.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ref, err := secret.ParseRef("file:" + fifo + "#" + claudeOAuthField)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := kindResolver{kinds: map[secret.Ref]CredentialKind{ref: OAuthToken}}.Resolve(ref)
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("resolving a FIFO credential file still blocked after 30 s")
	}
	var be *secret.BindingError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), ref.String()) {
		t.Errorf("err = %v, want a BindingError naming %s: not a regular file", err, ref)
	}
}
