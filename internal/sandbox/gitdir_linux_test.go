//go:build linux && amd64

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/fault"
)

// hostGit runs the host's git in dir with a fixed identity, no hooks and
// no user configuration.
func hostGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=/dev/null", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@example.invalid", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@example.invalid"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitLayout is a workspace whose .git file points outside it, and the
// host directory holding its git directory (byte-identical afterwards).
type gitLayout struct{ ws, gitHome string }

// linkedWorktree: main repository M, workspace = `git worktree add` of
// it on a branch (.git: "gitdir: M/.git/worktrees/wt", absolute).
func linkedWorktree(t testing.TB) gitLayout {
	m := t.TempDir()
	if err := os.WriteFile(filepath.Join(m, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hostGit(t, m, "init", "-q", "-b", "main")
	hostGit(t, m, "add", ".")
	hostGit(t, m, "commit", "-q", "-m", "base")
	ws := filepath.Join(t.TempDir(), "wt")
	hostGit(t, m, "worktree", "add", "-q", "-b", "topic", ws)
	return gitLayout{ws: ws, gitHome: m}
}

// submoduleCheckout: superproject S with submodule "sub"; workspace =
// S/sub (.git: "gitdir: ../.git/modules/sub", relative, and core.worktree
// "../../../sub" in that git directory's config).
func submoduleCheckout(t testing.TB) gitLayout {
	lib, s := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(lib, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hostGit(t, lib, "init", "-q", "-b", "main")
	hostGit(t, lib, "add", ".")
	hostGit(t, lib, "commit", "-q", "-m", "lib")
	hostGit(t, s, "init", "-q", "-b", "main")
	hostGit(t, s, "submodule", "add", "-q", lib, "sub")
	hostGit(t, s, "commit", "-q", "-m", "super")
	hostGit(t, filepath.Join(s, "sub"), "checkout", "-q", "-b", "topic")
	return gitLayout{ws: filepath.Join(s, "sub"), gitHome: filepath.Join(s, ".git")}
}

const agentIdent = "export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=a@example.invalid GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=a@example.invalid\n"

// TestGitDirOutsideWorkspace: for a linked worktree and a submodule
// checkout as the workspace, git status, diff and commit work inside the
// candidate profile with the real git (the common directory projected,
// its writes in the candidate's git layer), git status and diff work in
// the read profile (commit fails: read-only); the agent's hook and
// core.fsmonitor in its git directory stay in the candidate; the user's
// repository (work tree and whole git directory) is byte-identical; the
// candidate's change set holds the edit, not the git directory's writes
// (issue 15 scope 1).
func TestGitDirOutsideWorkspace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout func(testing.TB) gitLayout
	}{{"worktree", linkedWorktree}, {"submodule", submoduleCheckout}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSandbox(t)
			l := tc.layout(t)
			before, beforeGit := treeHash(t, l.ws), treeHash(t, l.gitHome)
			canary := filepath.Join(t.TempDir(), "hook-ran")
			script := `set -e; cd /job/workspace
` + agentIdent + `git rev-parse --show-toplevel; echo changed >> a.txt; git status --porcelain; git diff --stat | tail -1
git commit -qam "agent edit"; git log --oneline | wc -l; git status --porcelain
cd "$(git rev-parse --git-common-dir)"; printf '#!/bin/sh\ntouch ` + canary + `\n' > hooks/pre-commit; chmod +x hooks/pre-commit
git config core.fsmonitor "touch ` + canary + `"`
			dir := t.TempDir()
			var out bytes.Buffer
			r, err := s.runAgentUnqualified(t, AgentSpec{Spec: Spec{Path: "/usr/bin/dash", Args: []string{"-c", script}, Stdout: &out, Stderr: &out},
				Gate: func(net.Listener) {}, Candidate: &Candidate{Workspace: l.ws, Dir: dir}})
			if err != nil || !r.Exit.Success() {
				t.Fatalf("candidate run: %v exit %+v\n%s", err, r.Exit, out.String())
			}
			if got, want := out.String(), "/job/workspace\n M a.txt\n 1 file changed, 1 insertion(+)\n2\n"; got != want {
				t.Errorf("git inside the candidate printed %q, want %q", got, want)
			}
			if after := treeHash(t, l.ws); after != before {
				t.Errorf("the user's work tree changed")
			}
			if after := treeHash(t, l.gitHome); after != beforeGit {
				t.Errorf("the user's git directory changed")
			}
			if _, err := os.Stat(canary); !os.IsNotExist(err) {
				t.Errorf("a hook the agent wrote ran (canary %v)", err)
			}
			ch, err := candidate.Changes(l.ws, filepath.Join(dir, "upper"))
			if err != nil || len(ch) != 1 || ch[0].Path != "a.txt" {
				t.Errorf("candidate changes %+v (%v), want a.txt only", ch, err)
			}
			if got := hostGit(t, l.ws, "log", "--oneline"); strings.Count(got, "\n") != 0 {
				t.Errorf("the agent's commit reached the user's repository:\n%s", got)
			}

			out.Reset()
			read := `cd /job/workspace; git status --porcelain; (echo x >> a.txt) 2>/dev/null || echo ro
git diff --stat; ` + agentIdent + `git commit -q --allow-empty -m x 2>/dev/null || echo no-commit; git log --oneline | wc -l`
			r, err = s.runAgentUnqualified(t, AgentSpec{Spec: Spec{Path: "/usr/bin/dash", Args: []string{"-c", read}, Stdout: &out, Stderr: &out},
				Gate: func(net.Listener) {}, Read: l.ws})
			if err != nil || !r.Exit.Success() {
				t.Fatalf("read run: %v exit %+v\n%s", err, r.Exit, out.String())
			}
			if got, want := out.String(), "ro\nno-commit\n1\n"; got != want {
				t.Errorf("git inside the read profile printed %q, want %q", got, want)
			}
			if after := treeHash(t, l.gitHome); after != beforeGit {
				t.Errorf("the user's git directory changed in the read profile")
			}
		})
	}
}

// TestGitDirRefusals: a .git file that names no git directory, or one
// whose target is not named like a repository's git directory (a stray
// "gitdir: $HOME" must not project it), refuses the job before anything
// runs: INVALID_INPUT sandbox.gitdir.
func TestGitDirRefusals(t *testing.T) {
	s := newTestSandbox(t)
	notGit := t.TempDir()
	writeTree(t, notGit, map[string]string{"HEAD": "ref: refs/heads/main\n", "objects/": ""})
	for name, body := range map[string]string{
		"garbage":  "not a gitdir line\n",
		"missing":  "gitdir: /nonexistent/.git\n",
		"unnamed":  "gitdir: " + notGit + "\n",
		"relative": "gitdir: ../../..\n",
	} {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			writeTree(t, ws, map[string]string{".git": body})
			_, err := s.runAgentUnqualified(t, AgentSpec{Spec: Spec{Path: "/usr/bin/true"}, Gate: func(net.Listener) {},
				Candidate: &Candidate{Workspace: ws, Dir: t.TempDir()}})
			var fe *fault.Error
			if !fault.HasCode(err, fault.InvalidInput) || !errors.As(err, &fe) || fe.Reason != reasonGitDir {
				t.Errorf("err = %v, want INVALID_INPUT %s", err, reasonGitDir)
			}
		})
	}
}

// TestGitDirInVerifyProfile: the verify profile (the candidate's upper on
// the read-only workspace) of a linked worktree projects its git
// directory read-only too: a check running git status and git diff sees
// the candidate's change against the worktree's HEAD.
func TestGitDirInVerifyProfile(t *testing.T) {
	s := newTestSandbox(t)
	l := linkedWorktree(t)
	upper := t.TempDir()
	writeTree(t, upper, map[string]string{"a.txt": "a\nchanged\n"})
	var out bytes.Buffer
	j, err := s.admitVerify(VerifySpec{Spec: Spec{Path: "/usr/bin/dash", Stdout: &out, Stderr: &out,
		// The verify view's root is the upper layer's (not idmapped): git's
		// ownership check needs the exception a check would pass.
		Args: []string{"-c", "g() { git -c safe.directory='*' \"$@\"; }; g status --porcelain; g diff --stat | tail -1"}}, Workspace: l.ws, Upper: upper})
	if err != nil {
		t.Fatalf("admitVerify: %v", err)
	}
	r, err := s.runJob(testCtx(t), j, "test")
	if err != nil || !r.Exit.Success() {
		t.Fatalf("run: %v exit %+v\n%s", err, r.Exit, out.String())
	}
	if got, want := out.String(), " M a.txt\n 1 file changed, 1 insertion(+)\n"; got != want {
		t.Errorf("git in the verify profile printed %q, want %q", got, want)
	}
}

// BenchmarkGitDirView times whole runs of /usr/bin/true, interleaved in
// one process: the candidate and read profiles on a plain repository
// (its .git inside) and on a linked worktree of the same tree (the git
// view: one more idmapped clone, and for the candidate one more overlay),
// and an agent run with /usr/bin/true bound by path and pinned (clone,
// fstat check, attach): what issue 15 scope 1's git view and the runtime
// pin add (docs/PERFORMANCE.md).
func BenchmarkGitDirView(b *testing.B) {
	s, err := New(Config{StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	wt := linkedWorktree(b)
	plain := wt.gitHome // the main checkout: .git is a directory
	gate := func(net.Listener) {}
	run := func(b *testing.B, spec AgentSpec) {
		j, err := s.admitAgent(spec)
		if err != nil {
			b.Fatal(err)
		}
		r, err := s.runJob(context.Background(), j, "bench")
		if err != nil || !r.Exit.Success() {
			b.Fatalf("%v %+v", err, r.Exit)
		}
	}
	cand := func(ws string) func(*testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				dir, err := os.MkdirTemp("/var/tmp", "coagent8-bench-git-")
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				run(b, AgentSpec{Spec: Spec{Path: "/usr/bin/true"}, Gate: gate, Candidate: &Candidate{Workspace: ws, Dir: dir}})
				b.StopTimer()
				os.RemoveAll(dir)
				b.StartTimer()
			}
		}
	}
	read := func(ws string) func(*testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				run(b, AgentSpec{Spec: Spec{Path: "/usr/bin/true"}, Gate: gate, Read: ws})
			}
		}
	}
	tools, err := os.MkdirTemp("/var/tmp", "coagent8-bench-pin-") // /usr is bound read-only whole
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(tools) })
	exe := filepath.Join(tools, "true")
	if body, err := os.ReadFile("/usr/bin/true"); err != nil || os.WriteFile(exe, body, 0o755) != nil {
		b.Fatal("copy /usr/bin/true", err)
	}
	bound := func(pin bool) func(*testing.B) {
		return func(b *testing.B) {
			spec := AgentSpec{Spec: Spec{Path: exe, ReadOnly: []string{exe}}, Gate: gate}
			if pin {
				spec.Pinned = []Pin{{Path: exe, Check: func(f *os.File) error { _, err := f.Stat(); return err }}}
			}
			for b.Loop() {
				run(b, spec)
			}
		}
	}
	b.Run("candidate-repo", cand(plain))
	b.Run("candidate-worktree", cand(wt.ws))
	b.Run("read-repo", read(plain))
	b.Run("read-worktree", read(wt.ws))
	b.Run("bind-path", bound(false))
	b.Run("bind-pinned", bound(true))
}
