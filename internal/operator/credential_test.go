package operator

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/secret"
)

func TestOperatorCredentialCreatedOnceAndRecoverable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	c1, created, err := LoadOrCreateCredential(dir)
	if err != nil || !created {
		t.Fatalf("first start: created %v, err %v", created, err)
	}
	c2, created, err := LoadOrCreateCredential(dir)
	if err != nil || created {
		t.Fatalf("second start: created %v, err %v", created, err)
	}
	c3, err := ReadCredential(dir)
	if err != nil || !c1.Password().Equal(c2.Password()) || !c1.Password().Equal(c3.Password()) {
		t.Fatalf("credential changed or unreadable: %v", err)
	}
	if n := len(c1.Password().Reveal()); n != 43 {
		t.Errorf("password length %d, want 43 (32 bytes base64url)", n)
	}
	if runtime.GOOS != "windows" {
		st, _ := os.Stat(filepath.Join(dir, CredentialFile))
		if st.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", st.Mode().Perm())
		}
	}
	if s := fmt.Sprintf("%v %+v %s", c1, c1, c1.Password()); strings.Contains(s, c1.Password().Reveal()) {
		t.Errorf("credential printed: %s", s)
	}
	if fmt.Sprint(c1.Password()) != secret.Placeholder {
		t.Errorf("password prints as %q", fmt.Sprint(c1.Password()))
	}
}

func TestOperatorCredentialRefusedWhenWeakOrLoose(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		reason        string
	}{
		{"weak", "password123\n", 0o600, "operator.credential_weak"},
		{"short random", "c2hvcnQ\n", 0o600, "operator.credential_weak"},
		{"loose mode", strings.Repeat("A", 43) + "\n", 0o644, "operator.credential_mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mode != 0o600 && runtime.GOOS == "windows" {
				return // no POSIX modes there; covered on Linux
			}
			dir := t.TempDir()
			path := filepath.Join(dir, CredentialFile)
			os.WriteFile(path, []byte(tc.content), tc.mode)
			os.Chmod(path, tc.mode)
			_, _, err := LoadOrCreateCredential(dir)
			if !fault.HasCode(err, fault.InvalidInput) || fault.From(err).Reason != tc.reason {
				t.Fatalf("err = %v, want %s", err, tc.reason)
			}
			if b, _ := os.ReadFile(path); string(b) != tc.content {
				t.Error("the file was rewritten")
			}
		})
	}
}

func TestOperatorNewValidates(t *testing.T) {
	_, err := New(t.Context(), Options{StateDir: "relative"})
	if !fault.HasCode(err, fault.InvalidInput) {
		t.Fatalf("err = %v", err)
	}
}

// TestOperatorCredentialFileMustBeItself: the credential file is read
// only as a regular file in the state directory: a symbolic link (to a
// private file holding a credential someone else chose, or dangling) or
// a FIFO (which would block the dashboard's start for ever) is refused,
// whatever the target's mode.
func TestOperatorCredentialFileMustBeItself(t *testing.T) {
	if runtime.GOOS == "windows" {
		return // no symlinks or FIFOs made here on Windows; covered on Linux
	}
	planted := filepath.Join(t.TempDir(), "planted")
	if err := os.WriteFile(planted, []byte(strings.Repeat("B", 43)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		make func(path string) error
	}{
		{"symlink to a private credential", func(p string) error { return os.Symlink(planted, p) }},
		{"dangling symlink", func(p string) error { return os.Symlink(planted+".nope", p) }},
		{"symlink to a FIFO", func(p string) error { return os.Symlink(fifo, p) }},
		{"FIFO", func(p string) error { return mkfifo(p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.make(filepath.Join(dir, CredentialFile)); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, _, err := LoadOrCreateCredential(dir); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("LoadOrCreateCredential blocked")
			}
			got, want := "", "operator.credential_file"
			if err != nil {
				got = fault.From(err).Reason
			}
			if !fault.HasCode(err, fault.InvalidInput) || got != want {
				t.Errorf("err = %v, reason %q; want INVALID_INPUT %q", err, got, want)
			}
		})
	}
}
