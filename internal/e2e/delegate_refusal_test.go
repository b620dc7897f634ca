package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// noJobStarted fails unless the state directory shows no job and no
// sandbox use: no job receipts directory and no runtime qualification
// (the first thing an approved job does in the sandbox), and the job's
// upstream double saw nothing.
func noJobStarted(t *testing.T, environ []string, upstream *providertest.Anthropic) {
	t.Helper()
	state := filepath.Join(homeOf(environ), ".coagent8")
	for _, d := range []string{"jobs", "delegation"} {
		if _, err := os.Stat(filepath.Join(state, d)); err == nil {
			t.Errorf("state/%s exists: a job or the sandbox was started", d)
		}
	}
	if n := len(upstream.Requests()); n != 0 {
		t.Errorf("%d provider requests after a refusal", n)
	}
}

func delegateErr(sc map[string]any) (code, reason string) {
	e, _ := sc["error"].(map[string]any)
	code, _ = e["code"].(string)
	reason, _ = e["reason"].(string)
	return code, reason
}

// TestDelegateConsentMatrix (issue 16 tests, consent): only accept with
// approve === true starts a job; decline, cancel, an empty accept,
// approve "true" (a string), approve false and a host without elicitation
// are POLICY_DENIED with their consent reason, and none of them makes a
// provider request or starts the sandbox.
func TestDelegateConsentMatrix(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer *mcp.ElicitResult // nil: the host has no elicitation
		reason string
	}{
		{"decline", &mcp.ElicitResult{Action: "decline"}, "consent.declined"},
		{"cancel", &mcp.ElicitResult{Action: "cancel"}, "consent.cancelled"},
		// The SDK checks an elicitation/create answer against the form's
		// schema first (required boolean approve), as for consult
		// (consent matrix_test.go): the refusal says the request failed.
		{"empty accept", &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, "consent.elicitation_failed"},
		{"approve string", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": "true"}}, "consent.elicitation_failed"},
		{"approve false", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, "consent.not_approved"},
		{"no elicitation", nil, "consent.unsupported_client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upstream := providertest.NewAnthropic(t, providertest.Options{})
			probe := providertest.NewAnthropic(t, providertest.Options{})
			environ := delegateEnv(t, probe.URL(), upstream.URL(), "")
			var opts *mcp.ClientOptions
			asked := 0
			if tc.answer != nil {
				opts = &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked++
					return tc.answer, nil
				}}
			}
			cs := connectElicit(t, environ, opts)
			ws := gitWorkspace(t)
			sc, res := callDelegate(t, cs, map[string]any{"task": "edit main.txt", "workspace_path": ws, "model": delegateModel,
				"budget": map[string]any{"max_usd": 2}})
			if code, reason := delegateErr(sc); !res.IsError || code != "POLICY_DENIED" || reason != tc.reason {
				t.Fatalf("delegate = %v, want POLICY_DENIED %s", sc, tc.reason)
			}
			if tc.answer != nil && asked != 1 {
				t.Errorf("asked %d times, want once", asked)
			}
			noJobStarted(t, environ, upstream)
		})
	}
}

// TestDelegateBadInput (issue 16 "Bad input"): each malformed request is
// a typed error with its code and reason before the user is asked, a
// budget above the user's ceiling is refused, Codex is refused as
// unsupported naming why, and nothing is started; an unknown job handle
// is job.unknown.
func TestDelegateBadInput(t *testing.T) {
	upstream := providertest.NewAnthropic(t, providertest.Options{})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), upstream.URL(), `{"schemaVersion":1,"governance":{"models":{"allow":["`+delegateModel+
		`"]}},"gate":{"credentials":{"anthropic":"env:REAL_KEY"}},"delegate":{"maxUSD":2,"maxMinutes":10}}`)
	asked := 0
	cs := connectElicit(t, environ, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked++
		return &mcp.ElicitResult{Action: "decline"}, nil
	}})
	ws, plain, dirty := gitWorkspace(t), t.TempDir(), gitWorkspace(t)
	// A second commit, so HEAD~1 is a commit other than HEAD.
	os.WriteFile(filepath.Join(ws, "other.txt"), []byte("second\n"), 0o644)
	gitIn(t, ws, "commit", "-q", "-am", "second")
	os.WriteFile(filepath.Join(dirty, "main.txt"), []byte("edited\n"), 0o644)
	// A linked worktree of ws: its git directory is projected from the
	// main repository, so its candidate starts from HEAD only.
	wt := filepath.Join(t.TempDir(), "wt")
	gitIn(t, ws, "worktree", "add", "-q", "--detach", wt)
	ok := map[string]any{"max_usd": 1}
	for _, tc := range []struct {
		name         string
		args         map[string]any
		code, reason string // reason "" = any (refused by the input schema)
	}{
		{"empty task", map[string]any{"task": "", "workspace_path": ws, "budget": ok}, "INVALID_INPUT", "delegate.task_empty"},
		{"blank task", map[string]any{"task": " \n", "workspace_path": ws, "budget": ok}, "INVALID_INPUT", "delegate.task_empty"},
		{"oversized task", map[string]any{"task": strings.Repeat("x", 64<<10+1), "workspace_path": ws, "budget": ok}, "INVALID_INPUT", ""},
		// A reasoning effort is not applied to jobs: refused, never dropped.
		{"reasoning effort", map[string]any{"task": "t", "workspace_path": ws, "budget": ok, "reasoning_effort": "high"}, "INVALID_INPUT", "delegate.effort_unsupported"},
		{"relative workspace", map[string]any{"task": "t", "workspace_path": "rel/ws", "budget": ok}, "INVALID_INPUT", "workspace.relative"},
		{"missing workspace", map[string]any{"task": "t", "workspace_path": "/nonexistent/coagent8-ws", "budget": ok}, "INVALID_INPUT", "workspace.not_found"},
		{"not a git work tree", map[string]any{"task": "t", "workspace_path": plain, "budget": ok}, "INVALID_INPUT", "git.not_repository"},
		{"no budget", map[string]any{"task": "t", "workspace_path": ws}, "INVALID_INPUT", "delegate.budget_zero"},
		{"zero budget", map[string]any{"task": "t", "workspace_path": ws, "budget": map[string]any{"max_usd": 0}}, "INVALID_INPUT", "delegate.budget_zero"},
		{"negative budget", map[string]any{"task": "t", "workspace_path": ws, "budget": map[string]any{"max_usd": -1}}, "INVALID_INPUT", "delegate.budget_invalid"},
		{"absurd usd", map[string]any{"task": "t", "workspace_path": ws, "budget": map[string]any{"max_usd": 1e308}}, "INVALID_INPUT", "budget.out_of_range"},
		{"absurd requests", map[string]any{"task": "t", "workspace_path": ws, "budget": map[string]any{"max_usd": 1, "max_requests": 10001}}, "INVALID_INPUT", "budget.out_of_range"},
		{"usd above ceiling", map[string]any{"task": "t", "workspace_path": ws, "budget": map[string]any{"max_usd": 2.5}}, "POLICY_DENIED", "delegate.budget_above_ceiling"},
		{"minutes above ceiling", map[string]any{"task": "t", "workspace_path": ws, "budget": map[string]any{"max_usd": 1, "max_minutes": 11}}, "POLICY_DENIED", "delegate.budget_above_ceiling"},
		{"agy", map[string]any{"task": "t", "workspace_path": ws, "backend": "agy", "budget": ok}, "UNSUPPORTED", "delegate.backend_unsupported"},
		{"base unknown", map[string]any{"task": "t", "workspace_path": ws, "base": "0000000000", "budget": ok}, "INVALID_INPUT", "delegate.base_unknown"},
		{"base unknown ref", map[string]any{"task": "t", "workspace_path": ws, "base": "no/such/branch", "budget": ok}, "INVALID_INPUT", "delegate.base_unknown"},
		{"base a blob", map[string]any{"task": "t", "workspace_path": ws, "base": "HEAD:main.txt", "budget": ok}, "INVALID_INPUT", "delegate.base_not_commit"},
		{"base a tree", map[string]any{"task": "t", "workspace_path": ws, "base": "HEAD^{tree}", "budget": ok}, "INVALID_INPUT", "delegate.base_not_commit"},
		{"base not HEAD in a linked worktree", map[string]any{"task": "t", "workspace_path": wt, "base": "HEAD~1", "budget": ok}, "INVALID_INPUT", "delegate.base_not_head"},
		{"base an option", map[string]any{"task": "t", "workspace_path": ws, "base": "--output=/tmp/x", "budget": ok}, "INVALID_INPUT", "delegate.base"},
		{"base garbage", map[string]any{"task": "t", "workspace_path": ws, "base": "a b\x00", "budget": ok}, "INVALID_INPUT", "delegate.base"},
		{"base oversized", map[string]any{"task": "t", "workspace_path": ws, "base": strings.Repeat("a", 300), "budget": ok}, "INVALID_INPUT", "delegate.base"},
		{"base HEAD over a dirty checkout", map[string]any{"task": "t", "workspace_path": dirty, "budget": ok}, "INVALID_INPUT", "delegate.workspace_dirty"},
		{"approve argument", map[string]any{"task": "t", "workspace_path": ws, "budget": ok, "approve": true}, "INVALID_INPUT", ""},
		{"status without job", map[string]any{"action": "status", "workspace_path": ws}, "INVALID_INPUT", "delegate.job_missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, res := callDelegate(t, cs, tc.args)
			code, reason := delegateErr(sc)
			if !res.IsError || code != tc.code || (tc.reason != "" && reason != tc.reason) {
				t.Fatalf("delegate = %v, want %s %s", sc, tc.code, tc.reason)
			}
		})
	}
	if asked != 0 {
		t.Errorf("the user was asked %d times about malformed jobs", asked)
	}
	// The negative budget's message names the field and value through MCP
	// (it used to say "budget fields must be positive numbers
	// (max_requests at most 10000)" for max_usd -1).
	sc, _ := callDelegate(t, cs, map[string]any{"task": "t", "workspace_path": ws, "budget": map[string]any{"max_usd": -1}})
	if e, _ := sc["error"].(map[string]any); e["message"] != "budget.max_usd must be a number of US dollars above 0 (got -1)." {
		t.Errorf("negative max_usd message = %v, want it to name budget.max_usd and -1", e["message"])
	}
	noJobStarted(t, environ, upstream)
	sc, res := callDelegate(t, cs, map[string]any{"action": "status", "job": "job_000000000000000000000000", "workspace_path": ws})
	if code, reason := delegateErr(sc); !res.IsError || code != "INVALID_INPUT" || reason != "job.unknown" {
		t.Fatalf("unknown job = %v, want INVALID_INPUT job.unknown", sc)
	}
}
