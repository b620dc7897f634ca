//go:build unix

package config

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestConfigThatIsAFIFODoesNotBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan File, 1)
	go func() {
		f, _ := LoadFile(path)
		done <- f
	}()
	select {
	case f := <-done:
		if f.GovernanceErr() == nil {
			t.Fatal("a FIFO config was accepted")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("LoadFile blocked on a FIFO")
	}
}
