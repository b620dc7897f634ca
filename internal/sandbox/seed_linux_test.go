//go:build linux && amd64

package sandbox

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestCandidateSeeded (issue 16 scope 1): a seeded upper layer is the
// candidate's starting view — its file replaces the workspace's, its
// whiteout hides one, its new file appears — and the command (nobody
// under a root supervisor) may edit the seeded file; the workspace is
// byte-identical afterwards.
func TestCandidateSeeded(t *testing.T) {
	s := newTestSandbox(t)
	ws, dir := t.TempDir(), t.TempDir()
	writeTree(t, ws, map[string]string{"a.txt": "a-head\n", "gone.txt": "head only\n"})
	before := treeHash(t, ws)
	upper := filepath.Join(dir, "upper")
	writeTree(t, upper, map[string]string{"a.txt": "a-base\n", "base.txt": "base only\n"})
	if err := unix.Mknod(filepath.Join(upper, "gone.txt"), unix.S_IFCHR|0o600, 0); err != nil {
		t.Fatal(err)
	}
	script := `cd /job/workspace; cat a.txt base.txt; test -e gone.txt || echo gone; echo edited >> a.txt && echo wrote`
	var out bytes.Buffer
	r, err := s.runAgentUnqualified(t, AgentSpec{Spec: Spec{Path: "/usr/bin/dash", Args: []string{"-c", script}, Stdout: &out, Stderr: &out},
		Gate: func(net.Listener) {}, Candidate: &Candidate{Workspace: ws, Dir: dir, Seeded: true}})
	if err != nil || !r.Exit.Success() {
		t.Fatalf("run: %v exit %+v\n%s", err, r.Exit, out.String())
	}
	if got, want := out.String(), "a-base\nbase only\ngone\nwrote\n"; got != want {
		t.Errorf("the seeded view printed %q, want %q", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(upper, "a.txt")); string(b) != "a-base\nedited\n" {
		t.Errorf("upper a.txt = %q", b)
	}
	if after := treeHash(t, ws); after != before {
		t.Error("the workspace changed")
	}
}

// TestCandidateSeedRefused: a seeded candidate directory with anything
// but upper/, or an upper layer holding a FIFO, a device, a hard link or
// a setuid file, is refused INVALID_INPUT before anything starts.
func TestCandidateSeedRefused(t *testing.T) {
	s := newTestSandbox(t)
	for name, prepare := range map[string]func(dir, upper string) error{
		"extra entry": func(dir, upper string) error { return os.Mkdir(filepath.Join(dir, "other"), 0o755) },
		"fifo":        func(_, upper string) error { return unix.Mkfifo(filepath.Join(upper, "f"), 0o644) },
		"device": func(_, upper string) error {
			return unix.Mknod(filepath.Join(upper, "d"), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3)))
		},
		"hard link": func(_, upper string) error {
			return errors.Join(os.WriteFile(filepath.Join(upper, "h"), nil, 0o644), os.Link(filepath.Join(upper, "h"), filepath.Join(upper, "h2")))
		},
		"setuid": func(_, upper string) error {
			return errors.Join(os.WriteFile(filepath.Join(upper, "s"), nil, 0o755), os.Chmod(filepath.Join(upper, "s"), 0o755|os.ModeSetuid))
		},
	} {
		t.Run(name, func(t *testing.T) {
			ws, dir := t.TempDir(), t.TempDir()
			upper := filepath.Join(dir, "upper")
			if err := errors.Join(os.Mkdir(upper, 0o755), prepare(dir, upper)); err != nil {
				t.Fatal(err)
			}
			_, err := s.runAgentUnqualified(t, AgentSpec{Spec: Spec{Path: "/usr/bin/true"}, Gate: func(net.Listener) {},
				Candidate: &Candidate{Workspace: ws, Dir: dir, Seeded: true}})
			if fe := fault.From(err); err == nil || fe.Code != fault.InvalidInput || fe.Reason != reasonSeed {
				t.Errorf("run = %v, want INVALID_INPUT %s", err, reasonSeed)
			}
		})
	}
}
