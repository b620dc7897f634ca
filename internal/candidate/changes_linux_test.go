package candidate

import (
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const (
	file = fs.FileMode(0o644)
	exe  = fs.FileMode(0o755)
	dir  = fs.ModeDir | 0o755
	link = fs.ModeSymlink | 0o777
)

func add(p string, m fs.FileMode) Change { return Change{Path: p, Kind: Added, Mode: m} }
func del(p string, m fs.FileMode) Change { return Change{Path: p, Kind: Deleted, Mode: m, OldMode: m} }
func mod(p string, m, old fs.FileMode) Change {
	return Change{Path: p, Kind: Modified, Mode: m, OldMode: old}
}
func withTarget(c Change, target string) Change { c.Target = target; return c }

func TestChangesHandMadeUpper(t *testing.T) {
	tests := []struct {
		name         string
		lower, upper []string
		want         []Change
	}{
		{"empty upper", []string{"f a x"}, nil, nil},
		{"added file and dir", []string{"f a x"}, []string{"f b y", "f n/c z"},
			[]Change{add("b", file), add("n", dir), add("n/c", file)}},
		{"modified same size", []string{"f a xx"}, []string{"f a yy"}, []Change{mod("a", file, file)}},
		{"modified size", []string{"f a x"}, []string{"f a xyz"}, []Change{mod("a", file, file)}},
		{"chmod only", []string{"f a x"}, []string{"x a x"}, []Change{mod("a", exe, file)}},
		{"copied up unchanged", []string{"f a x", "f d/b y"}, []string{"f a x", "f d/b y"}, nil},
		{"parents of a change are not changes", []string{"f a/b/c old", "f a/k k"}, []string{"f a/b/c new"},
			[]Change{mod("a/b/c", file, file)}},
		{"dir mode", []string{"d d", "f d/a x"}, []string{"D d"}, []Change{mod("d", fs.ModeDir|0o700, dir)}},
		{"whiteout file", []string{"f a x", "f b y"}, []string{"w a"}, []Change{del("a", file)}},
		{"whiteout dir subtree", []string{"f d/a x", "f d/s/b y", "f k z"}, []string{"w d"},
			[]Change{del("d", dir), del("d/a", file), del("d/s", dir), del("d/s/b", file)}},
		{"whiteout without lower", []string{"f a x"}, []string{"w gone"}, nil},
		{"opaque dir", []string{"f d/a same", "f d/b x", "f d/s/c y", "f d/m old"},
			[]string{"o d", "f d/a same", "f d/m new", "f d/n z"},
			[]Change{del("d/b", file), mod("d/m", file, file), add("d/n", file), del("d/s", dir), del("d/s/c", file)}},
		{"opaque hides lower below plain upper subdirs", []string{"f d/s/x x", "f d/s/y y"},
			[]string{"o d", "d d/s", "f d/s/y y"}, []Change{del("d/s/x", file)}},
		{"symlinks", []string{"l same t", "l re old", "f f x"}, []string{"l same t", "l re new", "l n f"},
			[]Change{withTarget(add("n", link), "f"), withTarget(mod("re", link, link), "new")}},
		{"file to dir", []string{"f p x"}, []string{"f p/in y"},
			[]Change{mod("p", dir, file), add("p/in", file)}},
		{"dir to file", []string{"f p/a x", "f p/s/b y"}, []string{"f p z"},
			[]Change{mod("p", file, dir), del("p/a", file), del("p/s", dir), del("p/s/b", file)}},
		{"file to symlink and back", []string{"f a x", "l b t"}, []string{"l a t", "f b t"},
			[]Change{withTarget(mod("a", link, file), "t"), mod("b", file, link)}},
		{"rename is delete plus add", []string{"f old x"}, []string{"w old", "f new x"},
			[]Change{add("new", file), del("old", file)}},
		{"byte order", []string{}, []string{"f a-b x", "f a/b y"},
			[]Change{add("a", dir), add("a-b", file), add("a/b", file)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, u := trees(t, tt.lower, tt.upper)
			got, err := Changes(l, u)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Changes() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestChangesNeverFollowsSymlinks puts symlinks to an outside directory on
// both sides: nothing below the outside directory may appear.
func TestChangesNeverFollowsSymlinks(t *testing.T) {
	outside := t.TempDir()
	build(t, outside, "f secret s", "d sub")
	l, u := trees(t, []string{"l ext " + outside, "f in/a x"},
		[]string{"o ext", "f ext/mine y", "l in " + outside})
	got, err := Changes(l, u)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		mod("ext", dir, link), add("ext/mine", file),
		withTarget(mod("in", link, dir), outside), del("in/a", file),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Changes() mismatch (-want +got):\n%s", diff)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{Added: "added", Modified: "modified", Deleted: "deleted"} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", k, got, want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Kind(0).String() did not panic")
		}
	}()
	_ = Kind(0).String()
}
