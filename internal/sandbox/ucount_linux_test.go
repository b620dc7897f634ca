//go:build linux && amd64

package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// holdInotifyArg is argv[1] of the test binary run inside the sandbox
// by TestInotifyBudgetNotTheHostUsers: it takes inotify instances until
// refused, says how many, and holds them until killed.
const holdInotifyArg = "__coagent8_hold_inotify__"

func init() {
	if len(os.Args) > 1 && os.Args[1] == holdInotifyArg {
		n := 0
		for ; n < 1<<16; n++ {
			if _, err := unix.InotifyInit1(0); err != nil {
				break
			}
		}
		fmt.Printf("held %d\n", n)
		time.Sleep(time.Minute)
		os.Exit(0)
	}
}

// TestInotifyBudgetNotTheHostUsers: inotify instances are counted per
// user in every user namespace up to the host's, where the sandbox's are
// charged to the supervisor's user (the namespace's owner). A command
// that took every instance it could left that user none until the run
// ended: the user's editors and file watchers, and the pin check of every
// other run this supervisor starts (pin_watch_linux.go), failed. A run
// now takes a bounded share and the host user can still make one.
func TestInotifyBudgetNotTheHostUsers(t *testing.T) {
	s := newTestSandbox(t)
	j, err := s.admit(Spec{Path: "/usr/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	j.path, j.args = redteamInsidePath, []string{holdInotifyArg}
	j.binds = append(j.binds, bind{Src: exe, Dst: redteamInsidePath})
	pr, pw := io.Pipe()
	j.stdout = pw
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	done := make(chan Receipt, 1)
	go func() {
		defer pw.Close()
		r, err := s.runJob(ctx, j, "test")
		if err != nil {
			t.Errorf("run: %v", err)
		}
		done <- r
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	if !strings.HasPrefix(line, "held ") {
		cancel()
		t.Fatalf("the command said %q (%v)", line, err)
	}
	fd, herr := unix.InotifyInit1(unix.IN_CLOEXEC)
	if herr == nil {
		unix.Close(fd)
	}
	cancel()
	<-done
	if herr != nil {
		t.Errorf("while the sandbox %s inotify instances, the supervisor's user could make none: %v", strings.TrimSpace(line), herr)
	}
}
