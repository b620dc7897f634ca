//go:build !windows

package operator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestOperatorCredentialFileOwner: a 0600 credential file another user
// owns is refused INVALID_INPUT operator.credential_owner (that user chose
// the credential); this user's own file is read. It chowns, so it needs
// root, as CI runs.
func TestOperatorCredentialFileOwner(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, CredentialFile)
	if _, _, err := LoadOrCreateCredential(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCredential(dir); err != nil {
		t.Fatalf("own file: %v", err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatalf("chown to 65534 (this test needs root, as CI runs it): %v", err)
	}
	_, err := ReadCredential(dir)
	if err == nil {
		t.Fatal("another user's file was read")
	}
	if fe := fault.From(err); fe.Reason != "operator.credential_owner" || !strings.Contains(fe.Message, "uid 65534") {
		t.Fatalf("another user's file: %v, want INVALID_INPUT operator.credential_owner", err)
	}
}
