// Package clitest locates the pinned coding-agent CLIs installed under the
// module root's .tools folder (by scripts/install.sh) for tests. A missing CLI is a
// test failure, never a skip: in CI nothing may skip for a missing tool.
package clitest

import (
	"os"
	"path/filepath"
	"testing"
)

// Root returns the module root (the directory holding go.mod) above the
// test's working directory.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("module root (go.mod) not found above the test directory")
		}
		dir = parent
	}
}

// Path returns the absolute path of the pinned CLI name ("claude",
// "codex") or fails the test with the install hint.
func Path(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Root(t), ".tools", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("pinned CLI %s missing at %s: run `bash scripts/install.sh` first: %v", name, p, err)
	}
	return p
}
