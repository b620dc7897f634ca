package admission

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestAdmitDirectoryFileSwap (issue 19 item 5): a candidate that replaces
// a directory with a file of the same name, or a file with a directory,
// is admitted all or nothing like any other change: the work tree ends
// as the candidate's tree exactly.
func TestAdmitDirectoryFileSwap(t *testing.T) {
	tests := []struct {
		name  string
		base  map[string]string
		edits []edit
	}{
		{"directory becomes a file", map[string]string{"a/x.txt": "x\n", "a/sub/y.txt": "y\n", "keep.txt": "k\n"},
			[]edit{{path: "a/x.txt", del: true}, {path: "a/sub/y.txt", del: true}, {path: "a", content: "now a file\n"}}},
		{"file becomes a directory", map[string]string{"b": "a file\n", "keep.txt": "k\n"},
			[]edit{{path: "b", del: true}, {path: "b/z.txt", content: "z\n"}, {path: "b/deep/w.txt", content: "w\n"}}},
		// .gitattributes takes the general path (scratch index, checkout-index).
		{"directory becomes a file, general path", map[string]string{"a/x.txt": "x\n", ".gitattributes": "*.txt text\n", "keep.txt": "k\n"},
			[]edit{{path: "a/x.txt", del: true}, {path: "a", content: "now a file\n"}}},
		{"file becomes a directory, general path", map[string]string{"b": "a file\n", ".gitattributes": "*.txt text\n", "keep.txt": "k\n"},
			[]edit{{path: "b", del: true}, {path: "b/z.txt", content: "z\n"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.base)
			c := f.candidate(tt.edits...)
			id := f.job(tt.edits...)
			if _, err := f.admit(id); err != nil {
				t.Fatalf("admit: %v", err)
			}
			if got := worktreeTree(t, f.ws); got != c.Tree {
				t.Errorf("work tree is %s, want the candidate tree %s", got, c.Tree)
			}
			if _, err := os.Stat(filepath.Join(f.ws, "keep.txt")); err != nil {
				t.Errorf("keep.txt: %v", err)
			}
			assertClean(t, f)
		})
	}
}

// TestAdmitDirectoryToFileRefusesStray: when the directory the candidate
// replaces with a file still holds a file the candidate does not delete
// (untracked here), the admission is refused before anything is written,
// INVALID_INPUT admission.dir_not_empty naming both paths, and the
// checkout (.git included) is byte-identical.
func TestAdmitDirectoryToFileRefusesStray(t *testing.T) {
	f := newFixture(t, map[string]string{"a/x.txt": "x\n", "keep.txt": "k\n"})
	edits := []edit{{path: "a/x.txt", del: true}, {path: "a", content: "now a file\n"}}
	id := f.job(edits...)
	writeFile(t, f.ws, "a/untracked.txt", "mine\n")
	before := snapshot(t, f.ws)
	_, err := f.admit(id)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.InvalidInput || fe.Reason != ReasonDirNotEmpty || fe.Details["stray"] != "a/untracked.txt" {
		t.Fatalf("admit: %v, want INVALID_INPUT %s naming a/untracked.txt", err, ReasonDirNotEmpty)
	}
	if d := cmp.Diff(before, snapshot(t, f.ws)); d != "" {
		t.Errorf("checkout changed (-before +after):\n%s", d)
	}
	assertClean(t, f)
}
