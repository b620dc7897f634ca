package candidate

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// FuzzChanges builds small lower and upper trees from the input and checks
// Changes against a differential oracle: the merged view computed path by
// path from overlay's rules, diffed with lower as two maps.
func FuzzChanges(f *testing.F) {
	f.Add([]byte{0, 0, 3, 2, 9, 0, 12, 2})
	f.Add([]byte{3, 0, 0, 2, 13, 0, 8, 3, 10, 1})
	f.Add([]byte{3, 0, 0, 2, 1, 3, 11, 0, 7, 4})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 24 {
			return
		}
		l, u := filepath.Join(t.TempDir(), "l"), filepath.Join(t.TempDir(), "u")
		os.Mkdir(l, 0o755)
		os.Mkdir(u, 0o755)
		for i := 0; i+1 < len(in); i += 2 {
			fuzzBuild(l, u, in[i], in[i+1])
		}
		got, err := Changes(l, u)
		if err != nil {
			t.Fatal(err)
		}
		lower, want := snapshot(t, l), map[string]Kind{}
		merged := mergedModel(t, lower, u)
		for p, d := range lower {
			if m, ok := merged[p]; !ok {
				want[p] = Deleted
			} else if m != d {
				want[p] = Modified
			}
		}
		for p := range merged {
			if _, ok := lower[p]; !ok {
				want[p] = Added
			}
		}
		gotKinds := map[string]Kind{}
		for i, c := range got {
			gotKinds[c.Path] = c.Kind
			if i > 0 && got[i-1].Path >= c.Path {
				t.Fatalf("not sorted or not unique at %q", c.Path)
			}
		}
		if diff := cmp.Diff(want, gotKinds); diff != "" {
			t.Fatalf("Changes() kinds mismatch (-want +got):\n%s", diff)
		}
	})
}

var fuzzPaths = []string{"a", "b", "a/a", "a/b", "b/a", "a/a/a"}

// fuzzBuild adds one entry; kinds 0-4 go to lower, 5-13 to upper.
// Entries that cannot be built (a parent is a file) are skipped.
func fuzzBuild(l, u string, k, pi byte) {
	kinds := []string{"f1", "f2", "x1", "d", "lt", "f1", "f2", "x1", "d", "lt", "lu", "w", "o", "D"}
	kind := kinds[int(k)%len(kinds)]
	root := l
	if int(k)%len(kinds) >= 5 {
		root = u
	}
	p := filepath.Join(root, fuzzPaths[int(pi)%len(fuzzPaths)])
	if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	if _, err := os.Lstat(p); err == nil {
		return
	}
	_ = buildOne(kind[:1], p, kind[1:])
}

// desc is an entry as the oracle compares it.
type desc struct {
	mode    fs.FileMode
	content string
}

// snapshot maps every path below root to its desc, not following links.
func snapshot(t *testing.T, root string) map[string]desc {
	m := map[string]desc{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		m[rel] = describe(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func describe(t *testing.T, p string) desc {
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	d := desc{mode: fi.Mode()}
	switch {
	case fi.Mode().Type() == fs.ModeSymlink:
		d.content, err = os.Readlink(p)
	case fi.Mode().IsRegular():
		var b []byte
		b, err = os.ReadFile(p)
		d.content = string(b)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// mergedModel applies upper to a copy of lower with overlay's rules:
// a whiteout removes a path and its subtree; an upper entry replaces the
// lower one, and hides the lower subtree unless both are plain directories
// and the upper one is not opaque.
func mergedModel(t *testing.T, lower map[string]desc, upper string) map[string]desc {
	m := make(map[string]desc, len(lower))
	for p, d := range lower {
		m[p] = d
	}
	err := filepath.WalkDir(upper, func(p string, _ fs.DirEntry, err error) error {
		if err != nil || p == upper {
			return err
		}
		rel, _ := filepath.Rel(upper, p)
		d := describe(t, p)
		old, had := m[rel]
		if d.mode.Type() == fs.ModeDevice|fs.ModeCharDevice || !d.mode.IsDir() || !had || !old.mode.IsDir() || opaque(p) {
			removeBelow(m, rel)
		}
		delete(m, rel)
		if d.mode.Type() != fs.ModeDevice|fs.ModeCharDevice {
			m[rel] = d
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func removeBelow(m map[string]desc, rel string) {
	for p := range m {
		if strings.HasPrefix(p, rel+"/") {
			delete(m, p)
		}
	}
}

func opaque(p string) bool {
	buf := make([]byte, 8)
	n, err := unix.Lgetxattr(p, xattrOpaque, buf)
	return err == nil && string(buf[:n]) == "y"
}
