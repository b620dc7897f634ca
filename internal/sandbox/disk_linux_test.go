//go:build linux && amd64

package sandbox

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCandidateDiskBounded: the candidate's upper layer is host disk,
// which neither the memory ceiling nor RLIMIT_FSIZE (one file) bounded: a
// hostile agent writing file after file filled the file system that
// holds the user's state and work. The run is ended disk_limit once its
// writes take more than Limits.Disk of that file system; a run
// writing less is not.
func TestCandidateDiskBounded(t *testing.T) {
	s := newTestSandbox(t)
	for _, tc := range []struct {
		name   string
		script string
		want   ExitClass
	}{
		// 64 files of 8 MiB (each under any per-file limit), synced so
		// the blocks are allocated, then a long sleep the watch must cut.
		{"fill", `cd /job/workspace; i=0; while [ $i -lt 64 ]; do head -c 8388608 /dev/zero > f$i; i=$((i+1)); done; sync; sleep 30`, ExitDiskLimit},
		{"small", `cd /job/workspace; head -c 1048576 /dev/zero > f; sync`, ExitExited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, dir := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(ws, "keep.txt"), []byte("keep\n"), 0o644)
			var out bytes.Buffer
			start := time.Now()
			r, err := s.runAgentUnqualified(t, AgentSpec{Spec: Spec{Path: "/usr/bin/dash", Args: []string{"-c", tc.script}, Stdout: &out, Stderr: &out,
				Limits: Limits{Disk: 64 << 20}}, Gate: func(ln net.Listener) {}, Candidate: &Candidate{Workspace: ws, Dir: dir}})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := r.Exit.Class, tc.want; got != want {
				t.Errorf("exit class %s, want %s (%+v) after %v:\n%s", got, want, r.Exit, time.Since(start), out.String())
			}
			if !r.TreeEmpty {
				t.Errorf("tree not verified empty")
			}
		})
	}
}

// TestTaskDiskBounded: the task profile (the user's checks, which run the
// agent's code on its candidate, and `coagent8 sandbox run`) writes its
// scratch and workspace copy on host disk in the job root, bounded only
// per file: a test that wrote file after file filled the disk. The same
// bound ends it disk_limit.
func TestTaskDiskBounded(t *testing.T) {
	for _, dir := range []string{"/job/scratch", "/job/workspace"} {
		t.Run(dir, func(t *testing.T) {
			ws := t.TempDir()
			os.WriteFile(filepath.Join(ws, "keep.txt"), []byte("keep\n"), 0o644)
			var out bytes.Buffer
			script := `cd ` + dir + `; i=0; while [ $i -lt 64 ]; do head -c 8388608 /dev/zero > f$i; i=$((i+1)); done; sync; sleep 30`
			r := runUnqualified(t, newTestSandbox(t), testCtx(t), Spec{Path: "/usr/bin/dash", Args: []string{"-c", script},
				Input: ws, Stdout: &out, Stderr: &out, Limits: Limits{Disk: 64 << 20}})
			if got, want := r.Exit.Class, ExitDiskLimit; got != want {
				t.Errorf("exit class %s, want %s (%+v):\n%s", got, want, r.Exit, out.String())
			}
		})
	}
}

// TestDiskFilesBounded: empty files take inodes and no bytes, and a file
// system out of inodes refuses every new file (the user's too), so the
// inodes a run's writes take are bounded as well.
func TestDiskFilesBounded(t *testing.T) {
	var st unix.Statfs_t
	if err := unix.Statfs(t.TempDir(), &st); err != nil || st.Files == 0 {
		t.Fatalf("the test needs a file system that counts inodes: %v, f_files %d", err, st.Files)
	}
	var out bytes.Buffer
	script := `cd /job/scratch; i=0; while [ $i -lt 20000 ]; do : > f$i; i=$((i+1)); done; sleep 30`
	r := runUnqualified(t, newTestSandbox(t), testCtx(t), Spec{Path: "/usr/bin/dash", Args: []string{"-c", script},
		Stdout: &out, Stderr: &out, Limits: Limits{DiskFiles: 5000}})
	if got, want := r.Exit.Class, ExitDiskLimit; got != want {
		t.Errorf("exit class %s, want %s (%+v):\n%s", got, want, r.Exit, out.String())
	}
}

// TestDiskAllocationBounded: fallocate(2) reserves any number of blocks
// in one system call, faster than the disk watch polls, and with
// FALLOC_FL_KEEP_SIZE the file's size stays 0, so RLIMIT_FSIZE does not
// apply either: one call could take the whole file system, the user's
// state included, before the watch looked. A run may not get more blocks
// than Disk by allocation; writing them (which the watch keeps up with)
// is the way left.
func TestDiskAllocationBounded(t *testing.T) {
	const disk = 64 << 20
	for _, dir := range []string{"/job/scratch", "/job/workspace"} {
		t.Run(dir, func(t *testing.T) {
			var out bytes.Buffer
			// -n is FALLOC_FL_KEEP_SIZE; the second file is a plain
			// fallocate past the size bound of the first.
			script := `cd ` + dir + `; : > k; fallocate -n -l 1G k; fallocate -l 256M g; echo "KB $(du -sk . | cut -f1)"`
			r := runUnqualified(t, newTestSandbox(t), testCtx(t), Spec{Path: "/usr/bin/dash", Args: []string{"-c", script},
				Stdout: &out, Stderr: &out, Limits: Limits{Disk: disk}})
			var kb int64
			for line := range strings.Lines(out.String()) {
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), "KB "); ok {
					kb, _ = strconv.ParseInt(v, 10, 64)
				}
			}
			if got := kb << 10; got > disk {
				t.Errorf("the run held %d MiB of disk (bound %d MiB), exit %+v:\n%s", got>>20, disk>>20, r.Exit, out.String())
			}
		})
	}
}
