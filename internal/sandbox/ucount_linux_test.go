//go:build linux && amd64

package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// holdArg is argv[1] of the test binary run inside the sandbox by
// TestUserBudgetsNotTheHostUsers; argv[2] names a per-user kernel count
// (holders). The command takes as much of it as it is given, says how
// much, and holds it until killed.
const holdArg = "__coagent8_hold_user_budget__"

// holders take one per-user count each until refused and return how
// many they got.
var holders = map[string]func() int{
	"inotify": func() int {
		n := 0
		for ; n < 1<<16; n++ {
			if _, err := unix.InotifyInit1(0); err != nil {
				break
			}
		}
		return n
	},
	// Queued real-time signals, blocked so they stay pending.
	"sigpending": func() int {
		runtime.LockOSThread()
		const sig = 40 // a real-time signal no runtime here uses
		set := uint64(1) << (sig - 1)
		if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0); e != 0 {
			return 0
		}
		tid := unix.Gettid()
		n := 0
		for ; n < 1<<20; n++ {
			info := unix.Siginfo{Signo: sig, Code: -1} // SI_QUEUE
			if _, _, e := unix.RawSyscall6(unix.SYS_RT_TGSIGQUEUEINFO, uintptr(os.Getpid()), uintptr(tid), sig, uintptr(unsafe.Pointer(&info)), 0, 0); e != 0 {
				break
			}
		}
		return n
	},
}

func init() {
	if len(os.Args) > 2 && os.Args[1] == holdArg {
		fmt.Printf("held %d\n", holders[os.Args[2]]())
		time.Sleep(time.Minute)
		os.Exit(0)
	}
}

// TestUserBudgetsNotTheHostUsers: some kernel counts are kept per user in
// every user namespace up to the host's, and the sandbox's are charged
// there to the supervisor's user (the namespace's owner). A command
// holding all it could get left that user none until the run ended:
// with every inotify instance taken, the user's file watchers and the pin
// check of every other run (pin_watch_linux.go) failed; with every
// pending signal taken, the user's timer_create and sigqueue failed. A run
// now takes a bounded share and the host user can still make one.
func TestUserBudgetsNotTheHostUsers(t *testing.T) {
	s := newTestSandbox(t)
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		count string
		host  func() error // one of the count on the host
	}{
		{"inotify", func() error {
			fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"sigpending", func() error {
			// A POSIX timer holds one pending signal from its creation.
			ev := struct {
				value         uintptr
				signo, notify int32
				pad           [12]int32
			}{notify: 1} // SIGEV_NONE
			var id int32
			if _, _, e := unix.RawSyscall(unix.SYS_TIMER_CREATE, uintptr(unix.CLOCK_MONOTONIC), uintptr(unsafe.Pointer(&ev)), uintptr(unsafe.Pointer(&id))); e != 0 {
				return e
			}
			_, _, _ = unix.RawSyscall(unix.SYS_TIMER_DELETE, uintptr(id), 0, 0)
			return nil
		}},
	} {
		t.Run(tc.count, func(t *testing.T) {
			if err := tc.host(); err != nil {
				t.Fatalf("the host cannot make one before the run: %v", err)
			}
			j, err := s.admit(Spec{Path: "/usr/bin/true"})
			if err != nil {
				t.Fatal(err)
			}
			j.path, j.args = redteamInsidePath, []string{holdArg, tc.count}
			j.binds = append(j.binds, bind{Src: exe, Dst: redteamInsidePath})
			pr, pw := io.Pipe()
			j.stdout = pw
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer pw.Close()
				if _, err := s.runJob(ctx, j, "test"); err != nil {
					t.Errorf("run: %v", err)
				}
			}()
			line, err := bufio.NewReader(pr).ReadString('\n')
			go io.Copy(io.Discard, pr)
			if !strings.HasPrefix(line, "held ") {
				cancel()
				<-done
				t.Fatalf("the command said %q (%v)", line, err)
			}
			herr := tc.host()
			cancel()
			<-done
			if herr != nil {
				t.Errorf("while the sandbox %s, the supervisor's user could take none: %v", strings.TrimSpace(line), herr)
			}
		})
	}
}
