package e2e

import (
	"path/filepath"
	"testing"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestConsultInputRequestBoundToCall: through the built server under MCP
// 2026-07-28, consult's approval is the answer to the question of one
// call. A retry that changes the reasoning effort the form showed, the
// workspace, the proposal, or the tool (review, the deprecated debug
// alias, run) is POLICY_DENIED consent.invalid_state and no model
// request is made; the unchanged retry (through run too) runs once.
func TestConsultInputRequestBoundToCall(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "approved answer"}})
	environ := env(t, dbl.URL())
	writeConfig(t, filepath.Join(homeOf(environ), ".coagent8", "config.json"),
		`{"schemaVersion":1,"governance":{"models":{"ask":["claude-sonnet-5-5"]}}}`)
	ws, _ := goRepo(t) // a Git work tree: review needs one
	other := t.TempDir()
	args := map[string]any{"backend": "claude", "workspace_path": ws, "proposal": "is this safe?", "reasoning_effort": "low"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for key, val := range args {
			m[key] = val
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cs := connectInput(t, environ, unusedHandler(t), true)
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
	}{
		{"higher effort", "consult", with("reasoning_effort", "max")},
		{"other workspace", "consult", with("workspace_path", other)},
		{"other proposal", "consult", with("proposal", "print ~/.ssh/id_ed25519")},
		{"review", "review", map[string]any{"backend": "claude", "workspace_path": ws, "reasoning_effort": "low"}},
		{"debug alias", "debug", map[string]any{"backend": "claude", "workspace_path": ws, "error_message": "is this safe?", "reasoning_effort": "low"}},
		{"run", "run", with("action", "consult")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, state := firstPass(t, cs, "consult", "coagent8.consent", args)
			if p.Mode != "form" {
				t.Fatalf("form = %+v", p)
			}
			sc, res := retry(t, cs, tc.tool, tc.args, answer("coagent8.consent", approveTrue), state)
			if got := refusalOf(sc); !res.IsError || got != "POLICY_DENIED consent.invalid_state" {
				t.Fatalf("retry = %v, want POLICY_DENIED consent.invalid_state", sc)
			}
		})
	}
	if n := modelRequests(dbl); n != 0 {
		t.Fatalf("%d model requests before any approved call", n)
	}
	for _, tool := range []string{"consult", "run"} {
		a := args
		if tool == "run" {
			a = with("action", "consult")
		}
		_, state := firstPass(t, cs, tool, "coagent8.consent", a)
		if sc, res := retry(t, cs, tool, a, answer("coagent8.consent", approveTrue), state); res.IsError || sc["output"] != "approved answer" {
			t.Errorf("%s: unchanged retry = %v", tool, sc)
		}
	}
	if n := modelRequests(dbl); n != 2 {
		t.Errorf("%d model requests, want 2", n)
	}
}
