package quarantine

import (
	"crypto/sha1"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteBlobKeepsExistingObject: an object is named by its content, so
// one already written holds the same bytes and is not written again.
// Writing again opened the 0400 file for writing, which an unprivileged
// coagent8 may not do: every candidate with two files of one content (two
// empty __init__.py) failed quarantine.build. As root that open succeeds,
// so the test marks the existing file and checks it is left as it is.
func TestWriteBlobKeepsExistingObject(t *testing.T) {
	repo, _ := newRepo(t, map[string]string{"main.go": "package main\n"})
	s, err := repo.Scratch("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := &builder{s: s, newHash: sha1.New}
	id, err := b.writeBlob(nil)
	if err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(s.Objects(), id[:2], id[2:])
	os.Chmod(obj, 0o600)
	os.WriteFile(obj, []byte("kept"), 0o400)
	os.Chmod(obj, 0o400)
	again, err := b.writeBlob(nil)
	if err != nil || again != id {
		t.Fatalf("second write: %q %v, want %q <nil>", again, err, id)
	}
	if got, want := readString(t, obj), "kept"; got != want {
		t.Errorf("existing object rewritten: got %q, want %q", got, want)
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
