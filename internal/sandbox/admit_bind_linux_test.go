package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestBindRefusesSpecialFiles: a read-only bind of a unix socket would
// hand the command the daemon listening on it (a read-only mount does
// not govern connect, nor does Landlock below ABI 9), so only files and
// directories are admitted; a FIFO is refused as well.
func TestBindRefusesSpecialFiles(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "c8-bind-") // outside the roots the sandbox replaces
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "daemon.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newTestSandboxAnyOS(t)
	for _, tt := range []struct{ path, want string }{
		{sock, sock + " is a unix socket, not a file or directory: only files and directories can be bound read-only"},
		{fifo, fifo + " is a named pipe, not a file or directory: only files and directories can be bound read-only"},
		{file, ""},
		{dir, ""},
	} {
		_, err := s.admitBind(tt.path)
		if tt.want == "" {
			if err != nil {
				t.Errorf("admitBind(%s) = %v, want admitted", tt.path, err)
			}
			continue
		}
		fe := fault.From(err)
		if got := []string{string(fe.Code), fe.Reason, fe.Message}; fe.Code != fault.InvalidInput || fe.Reason != "sandbox.root" || fe.Message != tt.want {
			t.Errorf("admitBind(%s) = %q, want INVALID_INPUT sandbox.root %q", tt.path, got, tt.want)
		}
	}
}
