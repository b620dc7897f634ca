//go:build linux && amd64

package sandbox

import (
	"context"
	"testing"
)

// BenchmarkRunTrue measures one in-process task-sandbox run of
// /usr/bin/true (fork of PID 1, namespaces, mounts, Landlock, seccomp,
// cgroups, teardown). The CLI comparison with bwrap, srt and codex lives in
// bench/sandbox.
func BenchmarkRunTrue(b *testing.B) {
	s, err := New(Config{StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	j, err := s.admit(Spec{Path: "/usr/bin/true"})
	if err != nil {
		b.Fatal(err)
	}
	var setup, run float64
	for b.Loop() {
		r, err := s.runJob(context.Background(), j, "")
		if err != nil || !r.Exit.Success() {
			b.Fatalf("%v %+v", err, r.Exit)
		}
		setup += r.SetupMS
		run += r.RunMS
	}
	b.ReportMetric(setup/float64(b.N), "setup-ms/op")
	b.ReportMetric(run/float64(b.N), "run-ms/op")
}
