package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestPrivateDir: the candidate directory must be this user's, mode
// 0700, and a directory; each refusal says which and the remedy.
// "Another user's" is a directory chowned to nobody when the test runs
// as root (CI), else "/" (root's).
func TestPrivateDir(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own := mk("own", 0o700)
	open := mk("open", 0o755)
	other, otherUID := "/", "0"
	if os.Geteuid() == 0 {
		other, otherUID = mk("other", 0o700), "65534"
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ dir, want string }{
		{own, ""},
		{open, "has mode 0755, not 0700"},
		{other, "belongs to uid " + otherUID + ", not to this user"},
		{file, "is not a directory"},
		{filepath.Join(base, "missing"), "is not a directory"},
	} {
		err := privateDir(tt.dir)
		if tt.want == "" {
			if err != nil {
				t.Errorf("privateDir(%s) = %v, want nil", tt.dir, err)
			}
			continue
		}
		fe := fault.From(err)
		if fe == nil || fe.Reason != "delegate.candidates" || !strings.Contains(fe.Message, tt.want) {
			t.Errorf("privateDir(%s) = %v, want delegate.candidates saying %q", tt.dir, err, tt.want)
		}
	}
}
