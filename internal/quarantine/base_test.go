package quarantine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestSnapshotBase: the uncommitted base is the work tree as `git add
// --all` sees it (a tracked edit, a deletion, a staged new file, an
// untracked file; not an ignored one), written only to the snapshot's own
// object directory: the user's index and object store are byte-identical
// after, and the repository alone cannot read the tree.
func TestSnapshotBase(t *testing.T) {
	repo, _ := newRepo(t, map[string]string{"a.txt": "a\n", "gone.txt": "g\n", ".gitignore": "*.log\n"})
	ws := repo.Top
	writeFile(t, ws, "a.txt", "a dirty\n")
	os.Remove(filepath.Join(ws, "gone.txt"))
	writeFile(t, ws, "staged.txt", "s\n")
	gitRun(t, ws, "add", "staged.txt")
	writeFile(t, ws, "new/untracked.txt", "u\n")
	writeFile(t, ws, "build.log", "ignored\n")
	index, _ := os.ReadFile(filepath.Join(repo.GitDir, "index"))
	objects := gitRun(t, ws, "count-objects", "-v")

	dir, tree, err := SnapshotBase(context.Background(), repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got := gitWith(t, ws, filepath.Join(dir, "objects"), "ls-tree", "-r", "--format=%(path)", tree)
	want := ".gitignore\na.txt\nnew/untracked.txt\nstaged.txt"
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("snapshot tree (-want +got):\n%s", d)
	}
	if c := gitWith(t, ws, filepath.Join(dir, "objects"), "cat-file", "-p", tree+":a.txt"); c != "a dirty" {
		t.Errorf("a.txt in the snapshot = %q", c)
	}
	if b, _ := os.ReadFile(filepath.Join(repo.GitDir, "index")); string(b) != string(index) {
		t.Error("the user's index changed")
	}
	if o := gitRun(t, ws, "count-objects", "-v"); o != objects {
		t.Errorf("the user's object store changed:\n%s\n->\n%s", objects, o)
	}
	if _, err := os.Stat(filepath.Join(dir, "index")); err == nil {
		t.Error("the snapshot kept its scratch index")
	}
	// Build reads the snapshot through Objects; without it the base is
	// unknown.
	if _, err := Build(context.Background(), Input{Repo: repo, Base: tree, Upper: t.TempDir(), ScratchDir: t.TempDir()}); err == nil ||
		!strings.Contains(err.Error(), "base") {
		t.Errorf("Build without the snapshot's objects = %v, want the base refused", err)
	}
	if _, err := Build(context.Background(), Input{Repo: repo, Base: tree, Objects: []string{filepath.Join(dir, "objects")},
		Upper: t.TempDir(), ScratchDir: t.TempDir()}); err != nil {
		t.Errorf("Build with the snapshot's objects: %v", err)
	}
}

// gitWith runs git in dir reading the extra object directory alt too.
func gitWith(t *testing.T, dir, alt string, args ...string) string {
	t.Helper()
	t.Setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", alt)
	defer os.Unsetenv("GIT_ALTERNATE_OBJECT_DIRECTORIES")
	return gitRun(t, dir, args...)
}

// TestSplitBase: a stored base names its revision and, for uncommitted,
// the job's object directory.
func TestSplitBase(t *testing.T) {
	for _, tc := range []struct {
		in, rev string
		objects []string
	}{
		{"0123abcd", "0123abcd", nil},
		{"uncommitted:feed", "feed", []string{"/s/jobs/j/base/objects"}},
	} {
		rev, objects := SplitBase(tc.in, "/s/jobs/j")
		if rev != tc.rev || !cmp.Equal(objects, tc.objects) {
			t.Errorf("SplitBase(%q) = %q %v, want %q %v", tc.in, rev, objects, tc.rev, tc.objects)
		}
	}
}

// TestSnapshotBaseBounded: a working tree whose untracked (not ignored)
// files exceed the snapshot's bound is refused INPUT_LIMIT before
// anything is hashed; ignored files do not count.
func TestSnapshotBaseBounded(t *testing.T) {
	repo, _ := newRepo(t, map[string]string{"a.txt": "a\n", ".gitignore": "ignored/\n"})
	big := func(p string) {
		t.Helper()
		f, err := os.Create(filepath.Join(repo.Top, p))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(MaxSnapshotBytes/2 + 1); err != nil { // sparse: no disk used
			t.Fatal(err)
		}
		f.Close()
	}
	os.Mkdir(filepath.Join(repo.Top, "ignored"), 0o755)
	big("ignored/one.bin")
	big("ignored/two.bin")
	objects := gitRun(t, repo.Top, "count-objects", "-v")
	if _, _, err := SnapshotBase(context.Background(), repo, t.TempDir()); err != nil {
		t.Fatalf("ignored files counted: %v", err)
	}
	big("one.bin")
	big("two.bin")
	parent := t.TempDir()
	_, _, err := SnapshotBase(context.Background(), repo, parent)
	if fe := fault.From(err); err == nil || fe.Code != fault.InputLimit || fe.Reason != ReasonSnapshotTooLarge {
		t.Fatalf("SnapshotBase over the bound = %v, want INPUT_LIMIT %s", err, ReasonSnapshotTooLarge)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("the refused snapshot left %d entries", len(ents))
	}
	if o := gitRun(t, repo.Top, "count-objects", "-v"); o != objects {
		t.Errorf("the user's object store changed")
	}
}
