//go:build linux && amd64

package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/fault"
)

// treeHash digests every path, type, mode, owner, symlink target and file
// content under dir: equal hashes mean a byte-identical tree.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%q %v %d:%d %d\n", rel, fi.Mode(), st.Uid, st.Gid, st.Mtim.Nano())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tgt, _ := os.Readlink(p)
			fmt.Fprintf(h, "-> %q\n", tgt)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%x\n", sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// writeTree creates files (path → content; a trailing "/" is a directory)
// under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCandidateProfileOverlay: in the candidate profile the agent's
// command (as nobody under a root supervisor) modifies, deletes, adds and
// replaces files of the user's workspace through /job/workspace; every
// change is in the candidate's upper directory, readable with
// candidate.Changes, and the user's workspace is byte-identical
// afterwards (issue 15 scope 1).
func TestCandidateProfileOverlay(t *testing.T) {
	s := newTestSandbox(t)
	ws, dir := t.TempDir(), t.TempDir()
	writeTree(t, ws, map[string]string{"mod.txt": "old\n", "del.txt": "bye\n", "keep.txt": "keep\n",
		"dir/x": "x\n", "dir/y": "y\n", "sub/deep/z": "z\n"})
	before := treeHash(t, ws)
	var out bytes.Buffer
	script := `set -e; cd /job/workspace; echo new > mod.txt; rm del.txt; echo added > add.txt; rm -r dir; mkdir dir; echo again > dir/x
echo z2 >> sub/deep/z; id -u; cat mod.txt keep.txt; test ! -e del.txt; echo nope > /job/scratch/s`
	r, err := s.runAgentUnqualified(t, AgentSpec{Spec: Spec{Path: "/usr/bin/dash", Args: []string{"-c", script}, Stdout: &out, Stderr: &out},
		Gate: func(ln net.Listener) {}, Candidate: &Candidate{Workspace: ws, Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Exit.Success() {
		t.Fatalf("exit %+v:\n%s", r.Exit, out.String())
	}
	wantUID := "0"
	if os.Geteuid() == 0 {
		wantUID = "65534"
	}
	if got, want := out.String(), wantUID+"\nnew\nkeep\n"; got != want {
		t.Errorf("inside output %q, want %q", got, want)
	}
	if r.Profile != ProfileCandidate {
		t.Errorf("receipt profile %q, want %q", r.Profile, ProfileCandidate)
	}
	if after := treeHash(t, ws); after != before {
		t.Errorf("the user's workspace changed: tree hash %s -> %s", before, after)
	}
	ch, err := candidate.Changes(ws, filepath.Join(dir, "upper"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range ch {
		got[c.Path] = c.Kind.String()
	}
	want := map[string]string{"mod.txt": "modified", "del.txt": "deleted", "add.txt": "added", "dir/x": "modified",
		"dir/y": "deleted", "sub/deep/z": "modified"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("candidate changes (-want +got):\n%s", d)
	}
}

// TestCandidateAdmission: bad candidate roots refuse before anything
// starts, naming the cause.
func TestCandidateAdmission(t *testing.T) {
	s := newTestSandbox(t)
	ws, dir, full := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, full, map[string]string{"x": "x"})
	file := filepath.Join(full, "x")
	comma := filepath.Join(t.TempDir(), "a,b")
	if err := os.Mkdir(comma, 0o755); err != nil {
		t.Fatal(err)
	}
	gate := func(net.Listener) {}
	for name, c := range map[string]struct {
		spec AgentSpec
		msg  string
	}{
		"workspace is a file":  {AgentSpec{Candidate: &Candidate{Workspace: file, Dir: dir}}, "not an admissible directory"},
		"relative workspace":   {AgentSpec{Candidate: &Candidate{Workspace: "ws", Dir: dir}}, "not an admissible directory"},
		"dir inside workspace": {AgentSpec{Candidate: &Candidate{Workspace: full, Dir: full}}, "overlap"},
		"dir not empty":        {AgentSpec{Candidate: &Candidate{Workspace: ws, Dir: full}}, "must be empty"},
		"comma in dir":         {AgentSpec{Candidate: &Candidate{Workspace: ws, Dir: comma}}, "contains ','"},
		"input and candidate":  {AgentSpec{Spec: Spec{Input: full}, Candidate: &Candidate{Workspace: ws, Dir: dir}}, "one or the other"},
	} {
		c.spec.Path, c.spec.Gate = "/usr/bin/true", gate
		_, err := s.RunAgent(context.Background(), c.spec)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.InvalidInput || fe.Reason != "sandbox.candidate" || !strings.Contains(fe.Message, c.msg) {
			t.Errorf("%s: err %v, want InvalidInput sandbox.candidate containing %q", name, err, c.msg)
		}
	}
}

// runAgentUnqualified runs spec without the qualification gate.
func (s *Sandbox) runAgentUnqualified(t *testing.T, spec AgentSpec) (Receipt, error) {
	t.Helper()
	j, err := s.admitAgent(spec)
	if err != nil {
		return Receipt{}, err
	}
	return s.runJob(testCtx(t), j, "test")
}

// TestCandidateGit: a Git repository as the candidate workspace: git
// status, diff and commit work inside (the idmapped view gives the agent
// the files' ownership, so there is no "dubious ownership"), the commit
// lands in the candidate's upper layer only, and a pre-commit hook and
// core.fsmonitor the agent writes stay in the candidate: the user's
// repository, hooks and config included, is byte-identical afterwards
// (issue 15 scope 1).
func TestCandidateGit(t *testing.T) {
	s := newTestSandbox(t)
	ws, dir := t.TempDir(), t.TempDir()
	writeTree(t, ws, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}, args...)...)
		cmd.Dir = ws
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@example.invalid", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@example.invalid"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "base")
	before := treeHash(t, ws)
	canary := filepath.Join(t.TempDir(), "hook-ran")
	script := `set -e; cd /job/workspace
export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=a@example.invalid GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=a@example.invalid
echo changed >> a.txt; git status --porcelain; git diff --stat | tail -1
git commit -qam "agent edit"; git log --oneline | wc -l
printf '#!/bin/sh\ntouch ` + canary + `\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
git config core.fsmonitor "touch ` + canary + `"`
	var out bytes.Buffer
	r, err := s.runAgentUnqualified(t, AgentSpec{Spec: Spec{Path: "/usr/bin/dash", Args: []string{"-c", script}, Stdout: &out, Stderr: &out},
		Gate: func(net.Listener) {}, Candidate: &Candidate{Workspace: ws, Dir: dir}})
	if err != nil || !r.Exit.Success() {
		t.Fatalf("run: %v exit %+v\n%s", err, r.Exit, out.String())
	}
	if got, want := out.String(), " M a.txt\n 1 file changed, 1 insertion(+)\n2\n"; got != want {
		t.Errorf("git inside printed %q, want %q", got, want)
	}
	if after := treeHash(t, ws); after != before {
		t.Errorf("the user's repository changed (tree hash %s -> %s)", before, after)
	}
	ch, err := candidate.Changes(ws, filepath.Join(dir, "upper"))
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, c := range ch {
		paths[c.Path] = true
	}
	for _, p := range []string{"a.txt", ".git/hooks/pre-commit", ".git/config"} {
		if !paths[p] {
			t.Errorf("candidate changes lack %s (have %d changes)", p, len(ch))
		}
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Errorf("a hook the agent wrote ran (canary %v)", err)
	}
}

// TestReadProfile: in the read profile the agent reads the user's
// workspace (a 0600 file too: the projection is idmapped under a root
// supervisor) and cannot write anything beneath it; the workspace is
// byte-identical afterwards (issue 15 scope 1).
func TestReadProfile(t *testing.T) {
	s := newTestSandbox(t)
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"a.txt": "visible\n", "sub/b.txt": "b\n"})
	if err := os.WriteFile(filepath.Join(ws, "private.txt"), []byte("owner only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, ws)
	script := `cd /job/workspace; cat a.txt private.txt
for w in "echo x > a.txt" "echo x > new.txt" "rm sub/b.txt" "mkdir d" "chmod 777 a.txt" "touch sub/c"; do
  if sh -c "$w" 2>/dev/null; then echo "WROTE: $w"; fi
done`
	var out bytes.Buffer
	r, err := s.runAgentUnqualified(t, AgentSpec{Spec: Spec{Path: "/usr/bin/dash", Args: []string{"-c", script}, Stdout: &out, Stderr: &out},
		Gate: func(net.Listener) {}, Read: ws})
	if err != nil || !r.Exit.Success() {
		t.Fatalf("run: %v exit %+v\n%s", err, r.Exit, out.String())
	}
	if got, want := out.String(), "visible\nowner only\n"; got != want {
		t.Errorf("read profile printed %q, want %q", got, want)
	}
	if r.Profile != ProfileRead {
		t.Errorf("profile %q, want %q", r.Profile, ProfileRead)
	}
	if after := treeHash(t, ws); after != before {
		t.Errorf("the user's workspace changed")
	}
	_, err = s.RunAgent(context.Background(), AgentSpec{Spec: Spec{Path: "/usr/bin/true"}, Gate: func(net.Listener) {},
		Read: ws, Candidate: &Candidate{Workspace: ws, Dir: t.TempDir()}})
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Reason != "sandbox.read" {
		t.Errorf("read and candidate together: %v, want InvalidInput sandbox.read", err)
	}
}
