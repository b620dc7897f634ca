//go:build linux && amd64

package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestScratchFiles: a file carried in is in scratch (0600, writable by
// the command) and the command's file is carried out after the run,
// 0600; what the command leaves as a symlink, a directory or over the
// bound is not carried out, and a host file that is not a regular file
// or is over its bound refuses the run.
func TestScratchFiles(t *testing.T) {
	s := newTestSandbox(t)
	sh, _ := filepath.EvalSymlinks("/bin/sh")
	host := t.TempDir()
	in := filepath.Join(host, "in")
	os.WriteFile(in, []byte("kept\n"), 0o600)
	out := func(name string) ScratchFile {
		return ScratchFile{Rel: "cfg/p/" + name, Host: filepath.Join(host, "out-"+name), Max: 16}
	}
	script := `f=/job/scratch/cfg/p/s.jsonl; stat -c %a "$f"; cat "$f"; echo more >> "$f"
ln -s /etc/passwd /job/scratch/cfg/p/link; mkdir /job/scratch/cfg/p/dir; head -c 17 /dev/zero > /job/scratch/cfg/p/big`
	var stdout bytes.Buffer
	spec := Spec{Path: sh, Args: []string{"-c", script}, Stdout: &stdout, Limits: Limits{Wall: time.Minute},
		ScratchIn:  []ScratchFile{{Rel: "cfg/p/s.jsonl", Host: in, Max: 16}},
		ScratchOut: []ScratchFile{out("s.jsonl"), out("link"), out("dir"), out("big"), out("absent")}}
	j, err := s.admit(spec)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.runJob(testCtx(t), j, "test"); err != nil || !r.Exit.Success() {
		t.Fatalf("run: %+v %v", r.Exit, err)
	}
	if got, want := stdout.String(), "600\nkept\n"; got != want {
		t.Errorf("inside: %q, want %q", got, want)
	}
	b, err := os.ReadFile(filepath.Join(host, "out-s.jsonl"))
	if fi, _ := os.Stat(filepath.Join(host, "out-s.jsonl")); err != nil || string(b) != "kept\nmore\n" || fi.Mode().Perm() != 0o600 {
		t.Errorf("carried out: %q %v", b, err)
	}
	for _, name := range []string{"link", "dir", "big", "absent"} {
		if _, err := os.Lstat(filepath.Join(host, "out-"+name)); err == nil {
			t.Errorf("%s was carried out", name)
		}
	}
	os.Symlink(in, filepath.Join(host, "in-link"))
	unix.Mkfifo(filepath.Join(host, "in-fifo"), 0o600)
	for _, tc := range []struct {
		name string
		f    ScratchFile
		want string
	}{
		{"symlink", ScratchFile{Rel: "a", Host: filepath.Join(host, "in-link"), Max: 16}, "sandbox.scratch"},
		{"FIFO", ScratchFile{Rel: "a", Host: filepath.Join(host, "in-fifo"), Max: 16}, "sandbox.scratch"},
		{"over bound", ScratchFile{Rel: "a", Host: in, Max: 2}, "sandbox.scratch"},
		{"escaping path", ScratchFile{Rel: "../workspace/a", Host: in, Max: 16}, "sandbox.scratch"},
		{"relative host", ScratchFile{Rel: "a", Host: "in", Max: 16}, "sandbox.scratch"},
		{"no bound", ScratchFile{Rel: "a", Host: in}, "sandbox.scratch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := s.admit(Spec{Path: sh, Args: []string{"-c", "true"}, ScratchIn: []ScratchFile{tc.f}})
			if err == nil {
				_, err = s.runJob(testCtx(t), j, "test")
			}
			if diff := cmp.Diff(tc.want, fault.From(err).Reason); diff != "" {
				t.Errorf("reason (-want +got):\n%s (%v)", diff, err)
			}
		})
	}
}

// TestScratchOutFIFO: a FIFO the command leaves where a carried-out file
// is expected is skipped like a symlink, not opened for reading: the
// tree has ended, so nothing would ever write it and the open blocked
// the run (and the turn behind it) for good.
func TestScratchOutFIFO(t *testing.T) {
	s := newTestSandbox(t)
	sh, _ := filepath.EvalSymlinks("/bin/sh")
	host := t.TempDir()
	spec := Spec{Path: sh, Args: []string{"-c", "mkfifo /job/scratch/s.jsonl"}, Limits: Limits{Wall: time.Minute},
		ScratchOut: []ScratchFile{{Rel: "s.jsonl", Host: filepath.Join(host, "out"), Max: 16}}}
	j, err := s.admit(spec)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		r   Receipt
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := s.runJob(testCtx(t), j, "test")
		done <- result{r, err}
	}()
	// Only a hang reaches the timeout: the run itself takes well under a
	// second, and its wall limit is a minute.
	select {
	case res := <-done:
		if res.err != nil || !res.r.Exit.Success() {
			t.Fatalf("run: %+v %v", res.r.Exit, res.err)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("the run did not return: the FIFO left in scratch was opened for reading")
	}
	if _, err := os.Lstat(filepath.Join(host, "out")); err == nil {
		t.Error("the FIFO was carried out")
	}
}
