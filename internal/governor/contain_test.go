package governor_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/policy"
	"github.com/coagent8/coagent8/internal/turn"
)

// TestContainment (issue 15 scope 8): the containment each backend's
// read-only turns get, and why, as doctor shows it. Without a gate
// credential, or without the kernel runtime, Claude Code keeps its
// verified profile saying which is missing; Codex always does (its
// read-only sandbox cannot run nested); agy has no kernel profile.
func TestContainment(t *testing.T) {
	const creds = `{"governance":{"models":{"allow":["m-default"]}},"gate":{"credentials":{"anthropic":"env:REAL_KEY"}}}`
	for _, tc := range []struct {
		name, cfg string
		want      []governor.Containment
	}{
		{"no gate credential", allowM, []governor.Containment{
			{Backend: "claude", Kind: "profile", Reason: "no gate credential configured for anthropic (set gate.credentials.anthropic to env:NAME or file:/abs/path)"},
			{Backend: "codex", Kind: "profile", Reason: "Codex's own read-only sandbox cannot run nested inside coagent8's kernel sandbox (its commands fail while it still reports readOnly), so Codex turns keep its verified read-only profile"},
			{Backend: "agy", Kind: "profile", Reason: "no kernel read profile for agy in this version"},
		}},
		{"credential but no kernel runtime in this process", creds, []governor.Containment{
			{Backend: "claude", Kind: "profile", Reason: "the kernel sandbox is unavailable on this host: delegate jobs are not available in this coagent8 process"},
			{Backend: "codex", Kind: "profile", Reason: "Codex's own read-only sandbox cannot run nested inside coagent8's kernel sandbox (its commands fail while it still reports readOnly), so Codex turns keep its verified read-only profile"},
			{Backend: "agy", Kind: "profile", Reason: "no kernel read profile for agy in this version"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := threeBackends(t, tc.cfg)
			got := g.Containment(context.Background())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Containment (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunReportsContainment: a completed turn says which containment
// applied and why (profile here: no gate credential).
func TestRunReportsContainment(t *testing.T) {
	g := threeBackends(t, allowM)
	res := g.Run(context.Background(), governor.Turn{Request: turn.Request{Backend: "claude", Prompt: "q",
		Workspace: t.TempDir(), SessionMode: "none"}, Consent: denyAll{}})
	o := res.Outcome
	got := []string{string(o.Status), o.Containment, o.ContainmentReason}
	want := []string{"completed", "profile", "no gate credential configured for anthropic (set gate.credentials.anthropic to env:NAME or file:/abs/path)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
}

type denyAll struct{}

func (denyAll) Ask(context.Context, policy.Decision) (governor.Answer, error) {
	panic("an allowed model is never asked")
}

func threeBackends(t *testing.T, cfg string) *governor.Governor {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := config.FromList([]string{"HOME=/home/u"})
	bs := []adapter.Backend{&fakeBackend{name: "claude"}, &fakeBackend{name: "codex"}, &fakeBackend{name: "agy"}}
	runner, err := turn.New(turn.Options{Env: env, Backends: bs, Events: &event.Memory{}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := governor.New(governor.Options{Env: env, Runner: runner, ConfigPath: path, Events: &event.Memory{}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}
