//go:build !windows

// Symbolic links need privileges on Windows, so this test is built
// where they do not.

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetModelRuleDanglingLink: a config that is a link to a file not yet
// there is created at the link's target; the link stays a link.
func TestSetModelRuleDanglingLink(t *testing.T) {
	dir := t.TempDir()
	link, target := filepath.Join(dir, "config.json"), filepath.Join(dir, "dotfiles", "coagent8.json")
	if err := os.Mkdir(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dotfiles/coagent8.json", link); err != nil {
		t.Fatal(err)
	}
	if _, err := SetModelRule(link, "allow", "m1"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	b, err := os.ReadFile(target)
	if err != nil || !strings.Contains(string(b), `"m1"`) {
		t.Errorf("target = %q, %v; want the rule written there", b, err)
	}
}
