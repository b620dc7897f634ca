//go:build linux && amd64

package sandbox

import (
	"context"
	"testing"
	"time"
)

// TestContainmentProbes runs every probe of notes/sandbox.md §7 that
// applies to the task sandbox; each must end contained.
func TestContainmentProbes(t *testing.T) {
	s := newTestSandbox(t)
	for _, name := range ProbeNames() {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := s.RunProbe(ctx, name)
			if err != nil {
				t.Fatalf("RunProbe(%s): %v", name, err)
			}
			if !res.Contained {
				t.Errorf("probe %s not contained: %s (exit %s)", name, res.Detail, res.Exit)
			}
			t.Logf("%s: %s (%.0f ms)", name, res.Detail, res.MS)
		})
	}
}
