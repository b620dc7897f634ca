package fingerprint

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestChangesDetectsWritesCreatesAndDeletes(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", "package a")
	write("sub/b.txt", "b")
	write("gone.txt", "x")
	before := Take(root)
	if !before.Measured() {
		t.Fatal("small tree not measured")
	}
	if got := before.Changes(Take(root), 10); len(got) != 0 {
		t.Fatalf("no-op changes = %v", got)
	}
	time.Sleep(10 * time.Millisecond)
	write("a.go", "package a // edited")
	write("PWNED.txt", "x")
	os.Remove(filepath.Join(root, "gone.txt"))
	got := before.Changes(Take(root), 10)
	want := []string{"PWNED.txt", "a.go", "gone.txt"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("changes (-want +got):\n%s", d)
	}
	if before.Digest() == Take(root).Digest() {
		t.Fatal("digest did not change")
	}
}
