package gitscope

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/google/go-cmp/cmp"
)

// repo is a real temporary Git repository driven by the test.
type repo struct {
	t    *testing.T
	dir  string
	home string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	r := &repo{t: t, dir: t.TempDir(), home: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	r.git("config", "user.email", "t@example.invalid")
	r.git("config", "user.name", "t")
	r.git("config", "commit.gpgsign", "false")
	return r
}

// env is what Collect sees: PATH for git, an empty HOME, and hostile GIT_*
// variables that must not reach git.
func (r *repo) env() config.Env {
	return config.FromList([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.home,
		"GIT_DIR=" + filepath.Join(r.home, "nope"), "GIT_WORK_TREE=/", "GIT_EXTERNAL_DIFF=/bin/false",
		"GIT_CONFIG_PARAMETERS='core.fsmonitor'='/bin/false'"})
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.home, "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) write(rel, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) commit(msg string) string {
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

func (r *repo) collect(scope string) Snapshot {
	r.t.Helper()
	s, err := Collect(context.Background(), Options{Workspace: r.dir, Scope: scope, Env: r.env()})
	if err != nil {
		r.t.Fatalf("Collect(%q): %v", scope, err)
	}
	return s
}

func contains(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("snapshot lacks %q:\n%s", w, text)
		}
	}
}

func absent(t *testing.T, text string, not ...string) {
	t.Helper()
	for _, w := range not {
		if strings.Contains(text, w) {
			t.Errorf("snapshot contains %q:\n%s", w, text)
		}
	}
}

func TestCollectUncommitted(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n\nfunc A() {}\n")
	r.write("b.go", "package a\n\nvar B = 1\n")
	r.write("dist/app.js", "old bundle\n")
	r.write(".gitignore", "ignored.txt\n")
	head := r.commit("init")

	r.write("a.go", "package a\n\nfunc A() { panic(1) }\n") // unstaged
	r.write("b.go", "package a\n\nvar B = 2\n")
	r.git("add", "b.go") // staged
	r.write("dist/app.js", "stale bundle\n")
	r.write("new.go", "package a\n// NEWFILE\n")
	r.write("ignored.txt", "IGNORED\n")
	r.write("blob.bin", "ab\x00cd")
	r.write("big.txt", strings.Repeat("x", UntrackedLimit+1))
	r.write("app.js.map", "MAPCONTENT")
	outside := filepath.Join(t.TempDir(), "secret.txt")
	_ = os.WriteFile(outside, []byte("OUTSIDE"), 0o600)
	if err := os.Symlink(outside, filepath.Join(r.dir, "link.txt")); err != nil {
		t.Fatal(err)
	}

	s := r.collect("uncommitted")
	if s.Commit != head || s.Incomplete {
		t.Errorf("Commit = %q, Incomplete = %v; want %q, false", s.Commit, s.Incomplete, head)
	}
	contains(t, s.Text, "Snapshot commit: "+head,
		"=== Staged changes (git diff --cached HEAD) ===", "+var B = 2",
		"=== Unstaged changes (git diff) ===", "+func A() { panic(1) }",
		"=== Untracked files ===", "+++ b/new.go", "+// NEWFILE")
	absent(t, s.Text, "IGNORED", "OUTSIDE", "stale bundle", "MAPCONTENT", "xxxxxxxx")
	if diff := cmp.Diff([]string{"blob.bin"}, s.Binary); diff != "" {
		t.Errorf("Binary (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"dist/app.js", "app.js.map"}, s.Excluded); diff != "" {
		t.Errorf("Excluded (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"big.txt (larger than 256 KiB)", "link.txt (not a regular file)"}, s.Omitted); diff != "" {
		t.Errorf("Omitted (-want +got):\n%s", diff)
	}
	contains(t, s.Text, "  dist/app.js\n", "  blob.bin\n", "  big.txt (larger than 256 KiB)\n")
	contains(t, s.Text, "--- a/a.go")   // unified=1 keeps a one-line context
	absent(t, s.Text, "\n package a\n") // not three lines of context
}

func TestCollectScopes(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "one\n")
	first := r.commit("first")
	r.write("a.txt", "two\n")
	second := r.commit("second commit message")
	r.write("a.txt", "three\n")
	r.git("add", "a.txt")
	r.write("a.txt", "four\n")

	tests := []struct {
		scope, commit string
		want, not     []string
	}{
		{"staged", second, []string{"=== Staged changes", "+three"}, []string{"+four", "Untracked"}},
		{first + ".." + second, second, []string{"=== Changes in " + first + ".." + second, "-one", "+two"}, []string{"+three"}},
		{"HEAD~1", first, []string{"=== Commit " + first + " (git show)", "+one", "first"}, []string{"+two"}},
		{second[:7], second, []string{"second commit message", "-one", "+two"}, nil},
		{"commit:" + second, second, []string{"+two"}, nil},
		{"branch:" + first, second, []string{"=== Changes since " + first, "+two"}, []string{"+three", "+four"}},
	}
	for _, tt := range tests {
		t.Run(tt.scope, func(t *testing.T) {
			s := r.collect(tt.scope)
			if s.Commit != tt.commit {
				t.Errorf("Commit = %s, want %s", s.Commit, tt.commit)
			}
			contains(t, s.Text, tt.want...)
			absent(t, s.Text, tt.not...)
		})
	}
}

func TestCollectAutoBase(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "base\n")
	base := r.commit("base")
	r.git("checkout", "-q", "-b", "feature")
	r.write("a.txt", "feature\n")
	head := r.commit("feature")
	r.write("b.txt", "untracked\n")

	s := r.collect("")
	if s.Base != base || s.Commit != head {
		t.Errorf("Base, Commit = %s, %s; want %s, %s", s.Base, s.Commit, base, head)
	}
	contains(t, s.Text, "=== Committed changes since the merge base", "+feature", "+untracked")

	r.git("checkout", "-q", "main")
	s = r.collect("")
	if s.Base != "" || s.Scope.Kind != Auto {
		t.Errorf("on the default branch: Base = %q, want \"\" (HEAD)", s.Base)
	}
	contains(t, s.Text, "uncommitted changes")
}

func TestCollectUnbornHead(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "first\n")
	r.git("add", "a.txt")
	s := r.collect("")
	if s.Commit != "" {
		t.Errorf("Commit = %q, want empty", s.Commit)
	}
	contains(t, s.Text, "Snapshot commit: (no commit yet)", "=== Staged changes (git diff --cached) ===", "+first")
}

// TestCollectRunsNoRepositoryCommand: settings in the untrusted repository
// that would run commands (fsmonitor, a clean filter, an external diff, a
// textconv) and hostile GIT_* variables have no effect.
func TestCollectRunsNoRepositoryCommand(t *testing.T) {
	r := newRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "evil.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho x >> "+marker+"\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.write("a.txt", "one\n")
	r.write(".gitattributes", "*.txt filter=evil diff=evil\n")
	r.commit("init")
	for _, kv := range [][2]string{{"core.fsmonitor", script}, {"filter.evil.clean", script},
		{"filter.evil.process", script}, {"diff.external", script}, {"diff.evil.textconv", script},
		{"diff.evil.command", script}, {"log.showSignature", "true"}, {"gpg.program", script}} {
		r.git("config", kv[0], kv[1])
	}
	r.write("a.txt", "two\n")
	s := r.collect("uncommitted")
	contains(t, s.Text, "+two")
	if _, err := os.Stat(marker); err == nil {
		b, _ := os.ReadFile(marker)
		t.Fatalf("a repository-configured command ran (%d times)", bytes.Count(b, []byte("x")))
	}
}

func TestCollectErrors(t *testing.T) {
	plain := t.TempDir()
	env := config.FromList([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()})
	_, err := Collect(context.Background(), Options{Workspace: plain, Env: env})
	if !fault.HasCode(err, fault.InvalidInput) {
		t.Errorf("not a repo: %v, want INVALID_INPUT", err)
	}
	r := newRepo(t)
	r.write("a", "a")
	r.commit("a")
	// A scope naming what the repository lacks is named back (issue 19
	// item 15), never git.failed.
	for _, tt := range []struct{ scope, reason, ref string }{
		{"commit:deadbeef", "git.unknown_commit", "deadbeef"},
		{"nosuchbranch", ReasonUnknownRef, "nosuchbranch"},
		{"base:feature/gone", ReasonUnknownRef, "feature/gone"},
		{"HEAD..feature/gone", ReasonUnknownRef, "feature/gone"},
		{"gone...HEAD", ReasonUnknownRef, "gone"},
		{"range:HEAD..", "", ""},
	} {
		_, err = Collect(context.Background(), Options{Workspace: r.dir, Scope: tt.scope, Env: r.env()})
		fe := fault.From(err)
		if tt.reason == "" {
			if err != nil {
				t.Errorf("%s: %v, want no error", tt.scope, err)
			}
			continue
		}
		got := []string{string(fe.Code), fe.Reason, fe.Details["ref"]}
		if diff := cmp.Diff([]string{"INVALID_INPUT", tt.reason, tt.ref}, got); diff != "" || !strings.Contains(fe.Message, `"`+tt.ref+`"`) {
			t.Errorf("%s: %v (-want +got)\n%s", tt.scope, err, diff)
		}
	}
	_, err = Collect(context.Background(), Options{Workspace: r.dir, Env: config.FromList([]string{"PATH=" + t.TempDir()})})
	if !fault.HasCode(err, fault.CLINotFound) {
		t.Errorf("no git: %v, want CLI_NOT_FOUND", err)
	}
}

// TestCollectLimits: a diff over the 4 MiB git buffer is cut with the
// contract's warning, and the snapshot is cut to the 3 MiB budget.
func TestCollectLimits(t *testing.T) {
	r := newRepo(t)
	line := strings.Repeat("y", 99) + "\n"
	r.write("huge.txt", strings.Repeat(line, 30000)) // 3 MB
	r.commit("huge")
	r.write("huge.txt", strings.Repeat(strings.ToUpper(line), 30000))

	c := &collector{g: newGit(r.env(), "git", r.dir), root: r.dir, snap: Snapshot{Scope: Scope{Kind: Uncommitted}}}
	if err := c.diff(context.Background(), working("x")[1]); err != nil {
		t.Fatal(err)
	}
	if !c.snap.Incomplete || !strings.HasSuffix(c.sections[0], "\n"+BufferWarning) {
		t.Errorf("diff over 4 MiB: Incomplete=%v, section tail %q", c.snap.Incomplete, tailOf(c.sections[0]))
	}
	if n := len(c.sections[0]); n > GitBufferLimit+len(BufferWarning)+200 {
		t.Errorf("section is %d bytes", n)
	}

	s := r.collect("uncommitted")
	if !s.Incomplete || !strings.HasSuffix(s.Text, "\n"+BudgetWarning) || len(s.Text) > SnapshotBudget+len(BudgetWarning)+1 {
		t.Errorf("snapshot: Incomplete=%v len=%d tail %q", s.Incomplete, len(s.Text), tailOf(s.Text))
	}
}

func tailOf(s string) string { return s[max(0, len(s)-120):] }
