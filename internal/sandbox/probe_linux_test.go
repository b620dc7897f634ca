//go:build linux && amd64

package sandbox

import (
	"context"
	"strings"
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
			if _, foreign := abiProbes[name]; foreign {
				assertForeignABIMatchesHost(t, name, res)
			}
			t.Logf("%s: %s (%.0f ms)", name, res.Detail, res.MS)
		})
	}
}

// assertForeignABIMatchesHost: a foreign-ABI probe names its mechanism
// absent exactly when this host cannot make the call outside the sandbox
// either; where the host can, the filter must have killed it (SIGSYS).
func assertForeignABIMatchesHost(t *testing.T, name string, res ProbeResult) {
	t.Helper()
	ctl := controlRun(t.Context(), name)
	if ctl.err != nil {
		t.Fatalf("%s control: %v", name, ctl.err)
	}
	absent := ctl.rep.Outcome == abiAbsent
	if got, want := res.HostLacks != "", absent && res.Exit == "exited"; got != want {
		t.Errorf("%s: host_lacks %q, want set %v (control %s)", name, res.HostLacks, want, ctl.describe())
	}
	if !absent && (res.Exit != "signalled" || !strings.Contains(res.Detail, "SIGSYS")) {
		t.Errorf("%s: the host can make the call, so the filter must kill it: exit %s, %s", name, res.Exit, res.Detail)
	}
}
