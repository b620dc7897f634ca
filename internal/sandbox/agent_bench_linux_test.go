//go:build linux && amd64

package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkAgentProfiles times a whole run of /usr/bin/true in the task
// profile, the agent profile (gate channel) and the candidate profile
// (gate channel and an overlay on a 20,000-file workspace, idmapped under
// a root supervisor): what the delegated-agent boundary adds to a task
// run, and that the candidate view does not depend on the tree's size
// (issue 15 Performance).
func BenchmarkAgentProfiles(b *testing.B) {
	s, err := New(Config{StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	ws := b.TempDir()
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
	gate := func(net.Listener) {}
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
	b.Run("task", func(b *testing.B) {
		for b.Loop() {
			j, err := s.admit(spec)
			run(b, j, err)
		}
	})
	b.Run("agent", func(b *testing.B) {
		for b.Loop() {
			j, err := s.admitAgent(AgentSpec{Spec: spec, Gate: gate})
			run(b, j, err)
		}
	})
	b.Run("candidate-20k", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			dir, err := os.MkdirTemp("/var/tmp", "coagent8-bench-cand-")
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			j, err := s.admitAgent(AgentSpec{Spec: spec, Gate: gate, Candidate: &Candidate{Workspace: ws, Dir: dir}})
			run(b, j, err)
			b.StopTimer()
			os.RemoveAll(dir)
			b.StartTimer()
		}
	})
}
