package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestOpenDiscovery: the in-process discovery gives the same directories
// as git rev-parse, for a main and a linked worktree; a subdirectory, a
// relative path and a plain directory are typed refusals.
func TestOpenDiscovery(t *testing.T) {
	ctx := context.Background()
	main := t.TempDir()
	git(t, main, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(main, "f"), []byte("f\n"), 0o644)
	os.Mkdir(filepath.Join(main, "sub"), 0o755)
	git(t, main, "add", "-A")
	git(t, main, "commit", "-q", "-m", "b")
	linked := filepath.Join(t.TempDir(), "wt")
	git(t, main, "worktree", "add", "-q", "--detach", linked)
	for _, dir := range []string{main, linked} {
		fast, err := Open(ctx, config.FromOS(), dir)
		if err != nil {
			t.Fatal(err)
		}
		slow := &Repo{bin: fast.bin, env: fast.env}
		out, err := slow.Run(ctx, dir, nil, nil, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir")
		if err != nil {
			t.Fatal(err)
		}
		want := string(out)
		got := fast.Top + "\n" + fast.GitDir + "\n" + fast.CommonDir + "\n"
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-rev-parse +discovered):\n%s", dir, d)
		}
	}
	for _, dir := range []string{filepath.Join(main, "sub"), "rel", t.TempDir()} {
		if _, err := Open(ctx, config.FromOS(), dir); !fault.HasCode(err, fault.InvalidInput) {
			t.Errorf("Open(%q) = %v, want INVALID_INPUT", dir, err)
		}
	}
}
