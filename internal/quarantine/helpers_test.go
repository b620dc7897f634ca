package quarantine

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/gitrepo"
)

// gitRun runs git in dir and returns trimmed stdout; failure fails t.
func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo makes a repository with files (path → content; a value starting
// with "@x:" is executable) committed, and returns it and the commit.
func newRepo(t testing.TB, files map[string]string) (*gitrepo.Repo, string) {
	t.Helper()
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	for p, c := range files {
		writeFile(t, dir, p, c)
	}
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "base")
	r, err := gitrepo.Open(context.Background(), config.FromOS(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, gitRun(t, dir, "rev-parse", "HEAD")
}

func writeFile(t testing.TB, root, p, c string) {
	t.Helper()
	full := filepath.Join(root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	mode := fs.FileMode(0o644)
	if rest, ok := strings.CutPrefix(c, "@x:"); ok {
		c, mode = rest, 0o755
	}
	if err := os.WriteFile(full, []byte(c), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(full, mode)
}

func change(kind candidate.Kind, p string, mode fs.FileMode) candidate.Change {
	c := candidate.Change{Path: p, Kind: kind, Mode: mode}
	if kind != candidate.Added {
		c.OldMode = 0o644
	}
	return c
}

// ghToken builds a synthetic GitHub token at run time.
func ghToken() string { return "ghp_" + strings.Repeat("Ab3", 12) }

// findingKeys lists "rule path" of each of c's findings, in order.
func findingKeys(c *Candidate) []string {
	var out []string
	for _, f := range c.Findings {
		out = append(out, f.Rule+" "+f.Path)
	}
	return out
}

// buildAdded builds the candidate whose changes are paths, each added
// (0644) in upper up over base.
func buildAdded(t testing.TB, repo *gitrepo.Repo, base, up string, paths ...string) *Candidate {
	t.Helper()
	var changes []candidate.Change
	for _, p := range paths {
		changes = append(changes, change(candidate.Added, p, 0o644))
	}
	c, err := Build(context.Background(), Input{Repo: repo, Base: base, Upper: up, Changes: changes})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
