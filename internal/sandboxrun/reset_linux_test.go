package sandboxrun

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReceiptResetsTheTerminal: on a real terminal (a pseudo-terminal
// made here) the receipt is preceded by a soft and an attribute reset, so
// concealed text or colours the command left set cannot hide it behind a
// fake receipt the command printed (red team: printf '\033[8m'); on a
// pipe, a file or a buffer the receipt stays plain JSON.
func TestReceiptResetsTheTerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	defer tty.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(t.TempDir() + "/receipt")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, tc := range []struct {
		name string
		w    io.Writer
		want string
	}{
		{"terminal", tty, resetSequence},
		{"pipe", w, ""},
		{"file", file, ""},
		{"buffer", &bytes.Buffer{}, ""},
	} {
		if got := terminalReset(tc.w); got != tc.want {
			t.Errorf("%s: reset %q, want %q", tc.name, got, tc.want)
		}
	}
}
