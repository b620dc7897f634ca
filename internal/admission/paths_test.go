package admission

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPatchPathsMatchesGit: the in-process header parse names the same
// paths as `git apply --numstat` plus the rename sources for renames, mode changes, binary files,
// deletions and quoted names; an unreadable header defers to git.
func TestPatchPathsMatchesGit(t *testing.T) {
	f := newFixture(t, map[string]string{"old name.txt": "same content for rename detection\nline\nline\nline\n",
		"mode.sh": "x\n", "gone.txt": "g\n", "tab\there.txt": "t\n"})
	c := f.candidate(edit{path: "new name.txt", content: "same content for rename detection\nline\nline\nline\n"},
		edit{path: "old name.txt", del: true}, edit{path: "gone.txt", del: true},
		edit{path: "bin.dat", content: "\x00\x01"}, edit{path: "tab\there.txt", content: "u\n"},
		edit{path: "é.txt", content: "e\n"})
	got, ok := patchPaths(c.Patch)
	if !ok {
		t.Fatalf("patchPaths refused a git patch:\n%s", c.Patch)
	}
	repoPaths := gitNumstat(t, f, c.Patch)
	slices.Sort(got)
	if d := cmp.Diff(repoPaths, got); d != "" {
		t.Errorf("paths (-git +parsed):\n%s\n%s", d, c.Patch)
	}
	for _, bad := range []string{"diff --git a/x b/y z\n", "diff --git \"a/unterminated b/x\n"} {
		if _, ok := patchPaths([]byte(bad)); ok {
			t.Errorf("patchPaths(%q) ok, want a deferral to git", bad)
		}
	}
}

func gitNumstat(t *testing.T, f *fixture, patch []byte) []string {
	t.Helper()
	repo := openRepo(t, f.ws)
	s, err := repo.Scratch("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.Git(context.Background(), "", patch, "apply", "--numstat", "-z", "-")
	if err != nil {
		t.Fatal(err)
	}
	paths := append(numstatPaths(out), renameSources(patch)...)
	slices.Sort(paths)
	return paths
}
