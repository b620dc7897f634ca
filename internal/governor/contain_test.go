package governor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/policy"
	"github.com/coagent8/coagent8/internal/process"
	"github.com/coagent8/coagent8/internal/turn"
)

// TestContainment (issue 15 scope 8): the containment each backend's
// read-only turns get, and why, as doctor shows it. Without a gate
// credential, with a declared credential that cannot be read (as delegate
// refuses it), without the claude CLI, or without the kernel sandbox,
// Claude Code keeps its verified profile saying which is missing, in
// words and as a machine-readable code; Codex always does (its read-only
// sandbox cannot run nested); agy has no kernel profile.
func TestContainment(t *testing.T) {
	const creds = `{"governance":{"models":{"allow":["m-default"]}},"gate":{"credentials":{"anthropic":"env:REAL_KEY"}}}`
	key := "REAL_KEY=sk-ant-synthetic-" + strings.Repeat("k", 24)
	codex := governor.Containment{Backend: "codex", Kind: "profile", ReasonCode: governor.ContainBackend,
		Reason: "Codex's own read-only sandbox cannot run nested inside coagent8's kernel sandbox (its commands fail while it still reports readOnly), so Codex turns keep its verified read-only profile"}
	agy := governor.Containment{Backend: "agy", Kind: "profile", ReasonCode: governor.ContainBackend, Reason: "no kernel read profile for agy in this version"}
	// noCLI resolves the claude CLI as the real runtime does, on a PATH
	// that holds none.
	noCLI := func(env config.Env) func(context.Context) (governor.DelegateDeps, error) {
		return func(context.Context) (governor.DelegateDeps, error) {
			return governor.DelegateDeps{Runtime: func(context.Context, string) (delegation.Runtime, error) {
				_, _, err := process.Resolve(env, "claude", "CLAUDE_PATH")
				return delegation.Runtime{}, err
			}}, nil
		}
	}
	noSandbox := func(config.Env) func(context.Context) (governor.DelegateDeps, error) {
		return func(context.Context) (governor.DelegateDeps, error) {
			return governor.DelegateDeps{}, fault.New(fault.SandboxUnavailable, "sandbox.unqualified", "user namespaces are disabled")
		}
	}
	fifo := filepath.Join(t.TempDir(), "key-fifo")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, cfg  string
		env        []string
		delegation func(config.Env) func(context.Context) (governor.DelegateDeps, error)
		want       governor.Containment
	}{
		{"no gate credential", allowM, nil, nil, governor.Containment{Backend: "claude", Kind: "profile", ReasonCode: governor.ContainNoCredential,
			Reason: "no gate credential configured for anthropic (set gate.credentials.anthropic to env:NAME or file:/abs/path)"}},
		{"declared variable unset", creds, nil, noCLI, governor.Containment{Backend: "claude", Kind: "profile", ReasonCode: governor.ContainCredentialUnresolved,
			Reason: "the credential gate.credentials.anthropic declares, env:REAL_KEY, cannot be read: empty or unset; " +
				"set it before starting coagent8, or change gate.credentials.anthropic"}},
		{"declared file missing", strings.Replace(creds, "env:REAL_KEY", "file:/nonexistent/coagent8-key", 1), nil, noCLI,
			governor.Containment{Backend: "claude", Kind: "profile", ReasonCode: governor.ContainCredentialUnresolved,
				Reason: "the credential gate.credentials.anthropic declares, file:/nonexistent/coagent8-key, cannot be read: file unreadable (missing or not permitted); " +
					"set it before starting coagent8, or change gate.credentials.anthropic"}},
		// The cause is named (red team: a FIFO read "unset, missing or empty").
		{"declared file a FIFO", strings.Replace(creds, "env:REAL_KEY", "file:"+fifo, 1), nil, noCLI,
			governor.Containment{Backend: "claude", Kind: "profile", ReasonCode: governor.ContainCredentialUnresolved,
				Reason: "the credential gate.credentials.anthropic declares, file:" + fifo + ", cannot be read: not a regular file (p---------): name the credential file itself; " +
					"set it before starting coagent8, or change gate.credentials.anthropic"}},
		{"claude CLI missing", creds, []string{key, "PATH=/nonexistent-c8"}, noCLI, governor.Containment{Backend: "claude", Kind: "profile",
			ReasonCode: governor.ContainCLINotFound, Reason: "the claude CLI was not found, so no Claude Code can run in the kernel sandbox: claude CLI not found; searched: /nonexistent-c8/claude" +
				"; install it on PATH or set CLAUDE_PATH to its absolute path (a coagent8 checkout's .tools/ copies are for its tests, see the README)"}},
		{"sandbox unavailable", creds, []string{key}, noSandbox, governor.Containment{Backend: "claude", Kind: "profile",
			ReasonCode: governor.ContainSandboxUnavailable, Reason: "the kernel sandbox is unavailable on this host: user namespaces are disabled"}},
		{"no kernel runtime in this process", creds, []string{key}, nil, governor.Containment{Backend: "claude", Kind: "profile",
			ReasonCode: governor.ContainUnavailable, Reason: "the kernel read profile cannot be opened: delegate jobs are not available in this coagent8 process"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := config.FromList(append([]string{"HOME=/home/u"}, tc.env...))
			var del func(context.Context) (governor.DelegateDeps, error)
			if tc.delegation != nil {
				del = tc.delegation(env)
			}
			g := threeBackendsIn(t, tc.cfg, env, del)
			got := g.Containment(context.Background())
			if diff := cmp.Diff([]governor.Containment{tc.want, codex, agy}, got); diff != "" {
				t.Errorf("Containment (-want +got):\n%s", diff)
			}
			if strings.Contains(fmt.Sprint(got), "sk-ant-synthetic") {
				t.Errorf("the credential's value is in the report: %v", got)
			}
		})
	}
}

// TestRunReportsContainment: a completed turn says which containment
// applied and why: profile here, for want of a gate credential or with a
// declared one that cannot be read (the turn does not run in the kernel
// sandbox only to have every request refused at the gate).
func TestRunReportsContainment(t *testing.T) {
	const unset = `{"governance":{"models":{"allow":["m-default"]}},"gate":{"credentials":{"anthropic":"env:REAL_KEY"}}}`
	for _, tc := range []struct{ name, cfg, reason string }{
		{"no gate credential", allowM, "no gate credential configured for anthropic (set gate.credentials.anthropic to env:NAME or file:/abs/path)"},
		{"declared variable unset", unset, "the credential gate.credentials.anthropic declares, env:REAL_KEY, cannot be read: empty or unset; " +
			"set it before starting coagent8, or change gate.credentials.anthropic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := threeBackends(t, tc.cfg)
			res := g.Run(context.Background(), governor.Turn{Request: turn.Request{Backend: "claude", Prompt: "q",
				Workspace: t.TempDir(), SessionMode: "none"}, Consent: denyAll{}})
			o := res.Outcome
			got := []string{string(o.Status), o.Containment, o.ContainmentReason}
			if diff := cmp.Diff([]string{"completed", "profile", tc.reason}, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

type denyAll struct{}

func (denyAll) Ask(context.Context, policy.Decision) (governor.Answer, error) {
	panic("an allowed model is never asked")
}

func threeBackends(t *testing.T, cfg string) *governor.Governor {
	t.Helper()
	return threeBackendsIn(t, cfg, config.FromList([]string{"HOME=/home/u"}), nil)
}

// threeBackendsIn is threeBackends in env, its delegate jobs (and kernel
// turns) on delegation (nil: none in this process).
func threeBackendsIn(t *testing.T, cfg string, env config.Env, delegation func(context.Context) (governor.DelegateDeps, error)) *governor.Governor {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	bs := []adapter.Backend{&fakeBackend{name: "claude"}, &fakeBackend{name: "codex"}, &fakeBackend{name: "agy"}}
	runner, err := turn.New(turn.Options{Env: env, Backends: bs, Events: &event.Memory{}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := governor.New(governor.Options{Env: env, Runner: runner, ConfigPath: path, Events: &event.Memory{}, Delegation: delegation})
	if err != nil {
		t.Fatal(err)
	}
	return g
}
