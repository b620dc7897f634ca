//go:build unix

package secret

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadOpenDoesNotWaitForAFIFO: a path swapped for a FIFO after
// ReadFile's Stat is opened without waiting for a writer and refused as
// not a regular file; a blocking open would hang every resolution.
func TestReadOpenDoesNotWaitForAFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "key")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	ref, err := ParseRef("file:" + p)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := readOpen(ref, p); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("readOpen on a FIFO = %v, want a not-a-regular-file refusal", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("readOpen waited for the FIFO's writer")
	}
}
