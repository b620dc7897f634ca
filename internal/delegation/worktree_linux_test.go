//go:build linux && amd64

package delegation

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/gitrepo"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/quarantine"
)

func wtGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=/dev/null"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@example.invalid", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@example.invalid"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestClaudeCodeInLinkedWorktree: the pinned Claude Code, in the
// candidate profile on a linked worktree (its .git a file pointing into
// the main repository's .git/worktrees), edits a file and runs git
// status and git commit through its Bash tool: both work, the commit
// lands in the candidate's git layer, and the user's worktree and the
// main repository's whole git directory are byte-identical afterwards;
// the change set is the work tree's only and its patch builds on the
// host (issue 15 scope 1, test "a
// linked worktree ... git status, git diff and git commit work inside").
func TestClaudeCodeInLinkedWorktree(t *testing.T) {
	rt, err := ResolveRuntime(pinnedCLI(t, "claude"))
	if err != nil {
		t.Fatal(err)
	}
	const model = "claude-sonnet-4-5"
	main := t.TempDir()
	if err := os.WriteFile(filepath.Join(main, "main.txt"), []byte("hello old world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wtGit(t, main, "init", "-q", "-b", "main")
	wtGit(t, main, "add", ".")
	wtGit(t, main, "commit", "-q", "-m", "base")
	ws := filepath.Join(t.TempDir(), "wt")
	wtGit(t, main, "worktree", "add", "-q", "-b", "topic", ws)
	file := "/job/workspace/main.txt"
	cmd := `export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.invalid GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.invalid
git status --porcelain --untracked-files=no > status.txt 2>&1; git diff --stat | tail -1 >> status.txt
git commit -qam "agent edit" > commit.txt 2>&1; git log --oneline | wc -l >> commit.txt`
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "WORKTREE-DONE"}},
		providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": file}},
		providertest.ToolUse{Name: "Edit", Input: map[string]any{"file_path": file, "old_string": "old world", "new_string": "new world"}},
		providertest.ToolUse{Name: "Bash", Input: map[string]any{"command": cmd, "description": "git"}})
	g := newGate(t, double.URL())
	gr, phantom := grant(t, g, model)
	before, beforeGit := treeHash(t, ws), treeHash(t, filepath.Join(main, ".git"))
	dir := t.TempDir()
	var out, errb bytes.Buffer
	r := newRunner(t)
	qualify(t, r, rt)
	res, err := r.Run(testCtx(t), Job{Runtime: rt, Model: model, Prompt: "Edit main.txt and commit it.",
		Workspace: ws, CandidateDir: dir, Phantom: phantom, Grant: gr.ID, Gate: g, Stdout: &out, Stderr: &errb})
	if err != nil || !res.Receipt.Exit.Success() || !strings.Contains(out.String(), "WORKTREE-DONE") {
		t.Fatalf("run: %v exit %+v\nstdout %s\nstderr %s", err, res.Receipt.Exit, out.String(), errb.String())
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, "upper", name))
		return string(b)
	}
	if got, want := read("status.txt"), " M main.txt\n 1 file changed, 1 insertion(+), 1 deletion(-)\n"; got != want {
		t.Errorf("git status/diff inside printed %q, want %q", got, want)
	}
	if got := read("commit.txt"); got != "2\n" {
		t.Errorf("git commit inside: %q, want a second commit", got)
	}
	if after := treeHash(t, ws); after != before {
		t.Errorf("the user's worktree changed")
	}
	if after := treeHash(t, filepath.Join(main, ".git")); after != beforeGit {
		t.Errorf("the main repository's git directory changed")
	}
	var paths []string
	for _, c := range res.Changes {
		paths = append(paths, c.Path)
	}
	if got := strings.Join(paths, ","); got != "commit.txt,main.txt,status.txt" {
		t.Errorf("changes %s, want the work tree's files only", got)
	}
	// The host side: the worktree's patch builds from its base as for
	// any checkout.
	repo, err := gitrepo.Open(testCtx(t), config.FromOS(), ws)
	if err != nil {
		t.Fatal(err)
	}
	c, err := quarantine.Build(testCtx(t), quarantine.Input{Repo: repo, Base: "HEAD", Upper: filepath.Join(dir, "upper"), Changes: res.Changes})
	if err != nil || !bytes.Contains(c.Patch, []byte("+hello new world")) {
		t.Errorf("patch of the worktree candidate: %v\n%s", err, c.Patch)
	}
}
