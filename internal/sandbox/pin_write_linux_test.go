//go:build linux && amd64

package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// writeInPlace overwrites the first bytes of path with b, keeping its
// inode (no rename, no truncation), as the file's owner can.
func writeInPlace(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Error(err)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
}

// onReady forwards the command's output and, at the first "ready" line,
// calls do once (the command then waits on its stdin).
type onReady struct {
	mu   sync.Mutex
	out  bytes.Buffer
	do   func()
	done bool
}

func (o *onReady) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.out.Write(b)
	if !o.done && o.do != nil && strings.Contains(o.out.String(), "ready\n") {
		o.done = true
		o.do()
	}
	return len(b), nil
}

func (o *onReady) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.out.String()
}

// TestPinWrittenInPlace (issue 15 scope 5): a write into the very inode
// a pin checked — same size, same path, no rename, so the mount still
// holds that inode — refuses the run's result with SANDBOX_UNAVAILABLE
// sandbox.pin_changed naming the file and when it was seen: during the
// check (the caller's Check writes after it hashed), between the check
// and the fork (nothing runs), between the release and the exec (the
// command is ended at once, the receipt says cancelled and names the
// file), and during the run into a pinned file that is not busy (a data
// file; found when the run ends, receipt returned with the refusal). An
// unchanged pair of pins runs. The same holds when the supervisor pins
// as an unprivileged one (check by descriptor, bind by path). Before
// the watch each write ran, or its result was accepted.
func TestPinWrittenInPlace(t *testing.T) {
	s := newTestSandbox(t)
	dir, err := os.MkdirTemp("/var/tmp", "coagent8-pinw-") // /tmp is the sandbox's own
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	exe, data := filepath.Join(dir, "tool"), filepath.Join(dir, "data")
	script := []byte("#!/bin/sh\necho ready\nread x\ncat " + data + "\n")
	checked := []byte("checked\n")
	sum := func(b []byte) string { d := sha256.Sum256(b); return hex.EncodeToString(d[:]) }
	writeExe := func() { writeInPlace(t, exe, bytes.Replace(script, []byte("ready"), []byte("READY"), 1)) }
	writeData := func() { writeInPlace(t, data, []byte("written\n")) }

	type want struct {
		reason, seen string
		output       string   // exact, when not refused before anything ran
		changed      []string // receipt.PinsChanged
		class        ExitClass
	}
	for _, tc := range []struct {
		name      string
		afterPin  func(path string) // testOnlyAfterPin
		beforeRel func()            // testOnlyBeforeRelease
		dataCheck func(f *os.File) error
		block     bool // stdin stays open: the command waits until it is ended
		atReady   func()
		want      want
	}{
		{name: "unchanged", want: want{output: "ready\nchecked\n", class: ExitExited}},
		{name: "written by its check", dataCheck: func(f *os.File) error {
			err := digestCheck(sum(checked))(f)
			writeData() // after the hash: what was checked is not what is mounted
			return err
		}, want: want{reason: "sandbox.pin_changed", seen: pinAtCheck}},
		{name: "written after the check", afterPin: func(p string) {
			if p == data { // the last pin: the window up to the fork
				writeExe()
			}
		}, want: want{reason: "sandbox.pin_changed", seen: pinAtRelease}},
		{name: "written before the exec", beforeRel: writeExe, block: true,
			want: want{reason: "sandbox.pin_changed", seen: pinAtExec, changed: []string{exe}, class: ExitCancelled}},
		{name: "written during the run, not busy", atReady: writeData,
			want: want{reason: "sandbox.pin_changed", seen: pinAtEnd, output: "ready\nwritten\n", changed: []string{data}, class: ExitExited}},
	} {
		for _, byPath := range []bool{false, true} {
			name := tc.name + map[bool]string{false: " (mount)", true: " (by path)"}[byPath]
			t.Run(name, func(t *testing.T) {
				if err := os.WriteFile(exe, script, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(data, checked, 0o644); err != nil {
					t.Fatal(err)
				}
				check := digestCheck(sum(checked))
				if tc.dataCheck != nil {
					check = tc.dataCheck
				}
				stdinR, stdinW := io.Pipe()
				defer stdinW.Close()
				if !tc.block && tc.atReady == nil {
					stdinW.Close()
				}
				// A write at "ready" must follow the after-exec comparison
				// (it is "during the run"): the output copier waits for it.
				execChecked := make(chan struct{})
				out := &onReady{do: func() {
					if tc.atReady != nil {
						<-execChecked
						tc.atReady()
					}
					stdinW.Close()
				}}
				var once sync.Once
				testOnlyAfterPin, testOnlyBeforeRelease, testOnlyPinByPath = tc.afterPin, tc.beforeRel, byPath
				testOnlyAfterExecCheck = func() { once.Do(func() { close(execChecked) }) }
				defer func() {
					testOnlyAfterPin, testOnlyBeforeRelease, testOnlyPinByPath, testOnlyAfterExecCheck = nil, nil, false, nil
				}()
				spec := AgentSpec{Spec: Spec{Path: exe, ReadOnly: []string{exe, data}, Stdout: out, Stderr: io.Discard,
					Limits: Limits{Wall: 20 * time.Second}}, Gate: func(net.Listener) {}, Stdin: stdinR,
					Pinned: []Pin{{Path: exe, Check: digestCheck(sum(script))}, {Path: data, Check: check}}}
				r, err := s.runAgentUnqualified(t, spec)

				var fe *fault.Error
				switch {
				case tc.want.reason == "" && err != nil:
					t.Fatalf("run: %v, want success", err)
				case tc.want.reason != "" && (!errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != tc.want.reason):
					t.Fatalf("run: %v, want SANDBOX_UNAVAILABLE %s", err, tc.want.reason)
				case fe != nil && fe.Details["seen"] != tc.want.seen:
					t.Errorf("seen %q, want %q (%v)", fe.Details["seen"], tc.want.seen, err)
				}
				if fe != nil && !strings.Contains(fe.Message, dir) {
					t.Errorf("message %q does not name the file", fe.Message)
				}
				if tc.want.class == 0 && out.String() != "" {
					t.Errorf("the sandbox ran %q, want nothing", out.String())
				}
				if tc.want.output != "" && out.String() != tc.want.output {
					t.Errorf("output %q, want %q", out.String(), tc.want.output)
				}
				if d := cmp.Diff(tc.want.changed, r.PinsChanged); d != "" {
					t.Errorf("receipt pins_changed (-want +got):\n%s", d)
				}
				if tc.want.class != 0 && r.Exit.Class != tc.want.class {
					t.Errorf("exit %v, want %v", r.Exit.Class, tc.want.class)
				}
			})
		}
	}
}

// TestPinRewrittenTimesRestored: a pinned file rewritten after its check
// with the same size and its mtime set back (touch -d) refuses the run:
// truncated and rewritten, and written through a shared mapping (which
// raises no inotify IN_MODIFY), whose only trace left is the ctime that
// utimensat sets to now. The mapping case's refusal names the ctime and
// nothing else, so the ctime comparison alone caught it.
func TestPinRewrittenTimesRestored(t *testing.T) {
	s := newTestSandbox(t)
	dir, err := os.MkdirTemp("/var/tmp", "coagent8-pint-") // /tmp is the sandbox's own
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	checked := []byte("checked\n")
	sum := sha256.Sum256(checked)
	restoreMtime := func(st unix.Stat_t) {
		ts := fmt.Sprintf("@%d.%09d", st.Mtim.Sec, st.Mtim.Nsec)
		if out, err := exec.Command("touch", "-m", "-d", ts, data).CombinedOutput(); err != nil {
			t.Errorf("touch -d %s: %v %s", ts, err, out)
		}
	}
	for _, tc := range []struct {
		name      string
		write     func()
		ctimeOnly bool
	}{
		{"truncated and rewritten", func() {
			if err := os.WriteFile(data, []byte("CHECKED\n"), 0o644); err != nil { // O_TRUNC
				t.Error(err)
			}
		}, false},
		{"written through a shared mapping", func() {
			f, err := os.OpenFile(data, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := unix.Mmap(int(f.Fd()), 0, len(checked), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
			if err != nil {
				t.Fatal(err)
			}
			copy(m, "CHECKED\n")
			if err := unix.Msync(m, unix.MS_SYNC); err != nil {
				t.Error(err)
			}
			unix.Munmap(m)
		}, true},
	} {
		for _, byPath := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: " (mount)", true: " (by path)"}[byPath], func(t *testing.T) {
				if err := os.WriteFile(data, checked, 0o644); err != nil {
					t.Fatal(err)
				}
				var before unix.Stat_t
				if err := unix.Stat(data, &before); err != nil {
					t.Fatal(err)
				}
				testOnlyAfterPin = func(string) {
					tc.write()
					restoreMtime(before)
					var now unix.Stat_t
					if unix.Stat(data, &now) != nil || now.Mtim != before.Mtim || now.Size != before.Size {
						t.Errorf("mtime/size not restored: %+v, was %+v", now.Mtim, before.Mtim)
					}
				}
				testOnlyPinByPath = byPath
				defer func() { testOnlyAfterPin, testOnlyPinByPath = nil, false }()
				cat, _ := filepath.EvalSymlinks("/bin/cat")
				var out bytes.Buffer
				spec := AgentSpec{Spec: Spec{Path: cat, Args: []string{data}, ReadOnly: []string{data}, Stdout: &out, Stderr: io.Discard,
					Limits: Limits{Wall: 20 * time.Second}}, Gate: func(net.Listener) {},
					Pinned: []Pin{{Path: data, Check: digestCheck(hex.EncodeToString(sum[:]))}}}
				_, err := s.runAgentUnqualified(t, spec)
				var fe *fault.Error
				if !errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != "sandbox.pin_changed" {
					t.Fatalf("run: %v (ran %q), want SANDBOX_UNAVAILABLE sandbox.pin_changed", err, out.String())
				}
				if out.Len() != 0 {
					t.Errorf("the sandbox ran %q, want nothing", out.String())
				}
				if tc.ctimeOnly {
					for _, f := range []string{"mtime", "size", "inode", "links"} {
						if strings.Contains(fe.Message, f) {
							t.Errorf("refusal %q names %s: the ctime alone was to catch it", fe.Message, f)
						}
					}
					if !strings.Contains(fe.Message, "ctime") {
						t.Errorf("refusal %q does not name the ctime", fe.Message)
					}
				}
			})
		}
	}
}
