//go:build linux && amd64

package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkVerifyProfile times a whole run of /usr/bin/true as a check on
// a 20,000-file workspace: in the task profile on a copy of it (how a
// review's check sees a workspace, Spec.Input) against the verify
// profile on a candidate (the read-only overlay of a one-file upper
// layer on it): the verify view copies nothing, so it must not grow with
// the tree (issue 16 scope 4).
func BenchmarkVerifyProfile(b *testing.B) {
	s, err := New(Config{StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ws, upper := filepath.Join(dir, "ws"), filepath.Join(dir, "upper")
	for _, d := range []string{ws, upper} {
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 20000 {
		d := filepath.Join(ws, fmt.Sprintf("d%03d", i%200))
		if i < 200 {
			if err := os.Mkdir(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d", i)), []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(upper, "edited"), []byte("y"), 0o644); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, j job, err error) {
		if err != nil {
			b.Fatal(err)
		}
		r, err := s.runJob(context.Background(), j, "bench")
		if err != nil || !r.Exit.Success() {
			b.Fatalf("%v %+v", err, r.Exit)
		}
	}
	spec := Spec{Path: "/usr/bin/true"}
	b.Run("task-copy-20k", func(b *testing.B) {
		for b.Loop() {
			j, err := s.admit(Spec{Path: spec.Path, Input: ws})
			run(b, j, err)
		}
	})
	b.Run("verify-20k", func(b *testing.B) {
		for b.Loop() {
			j, err := s.admitVerify(VerifySpec{Spec: spec, Workspace: ws, Upper: upper})
			run(b, j, err)
		}
	})
}
