package governor_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/turn"
)

// TestFirstRunErrors (issue 19 items 9, 10, 11, 13): each mistake a
// newcomer makes ends in a typed refusal that names what to do, before
// any question or model turn.
func TestFirstRunErrors(t *testing.T) {
	notLoggedIn := func() *fakeBackend { return &fakeBackend{auth: "unauthenticated"} }
	tests := []struct {
		name     string
		cfg      string
		env      []string
		backend  string
		model    string
		ws       string // "" = a fresh directory
		claude   *fakeBackend
		terminal bool
		want     string   // "status code reason"
		inMsg    []string // substrings of the error message
		ran      bool
		asked    int
	}{
		{name: "unknown defaultBackend", cfg: `{"defaultBackend":"nope"}`, backend: "auto",
			want: "failed INVALID_INPUT config.default_backend_invalid", inMsg: []string{`"nope"`, "claude, codex or agy"}},
		// The caller's own input comes first, as in a terminal: a missing
		// workspace, not the backend it would have run on.
		{name: "missing workspace before an unknown backend", cfg: allowM, backend: "nope", ws: "/nonexistent/coagent8-ws",
			want: "failed INVALID_INPUT workspace.not_found", inMsg: []string{"/nonexistent/coagent8-ws"}},
		{name: "relative workspace before routing", cfg: `{"defaultBackend":"nope"}`, backend: "auto", ws: "rel/ws",
			want: "failed INVALID_INPUT workspace.relative", inMsg: []string{"rel/ws"}},
		{name: "unknown backend argument", cfg: allowM, backend: "nope",
			want: "failed INVALID_INPUT backend.unknown", inMsg: []string{"claude, codex or agy"}},
		{name: "schemaVersion 2 refuses", cfg: `{"schemaVersion":2,"governance":{"models":{"allow":["m-default"]}}}`,
			want: "failed POLICY_DENIED config.governance_invalid", inMsg: []string{"schemaVersion"}},
		{name: "malformed JSON names the cause", cfg: `{"governance":`,
			want: "failed POLICY_DENIED config.invalid_json", inMsg: []string{"not valid JSON: line 1, column 15: unexpected EOF"}},
		{name: "not logged in is refused before asking", cfg: askM, model: "m-ask", claude: notLoggedIn(),
			want: "failed AUTH_REQUIRED claude.not_logged_in", inMsg: []string{"before asking for approval", "/login"}},
		{name: "withheld API key is named", cfg: askM, model: "m-ask", claude: notLoggedIn(),
			env:  []string{"ANTHROPIC_API_KEY=synthetic-" + t.Name()},
			want: "failed AUTH_REQUIRED claude.not_logged_in", inMsg: []string{"ANTHROPIC_API_KEY is set", "COAGENT8_API_KEY_BILLING=claude"}},
		{name: "turn-time auth failure names the withheld key", cfg: allowM, model: "m-ok",
			claude: &fakeBackend{runErr: fault.New(fault.AuthRequired, "claude.authentication_failed", "Claude Code is not logged in.")},
			env:    []string{"ANTHROPIC_API_KEY=synthetic-" + t.Name()}, ran: true,
			want: "failed AUTH_REQUIRED claude.authentication_failed", inMsg: []string{"Claude Code is not logged in. ANTHROPIC_API_KEY is set", "COAGENT8_API_KEY_BILLING"}},
		{name: "API-key billing on: no hint", cfg: allowM, model: "m-ok",
			claude: &fakeBackend{runErr: fault.New(fault.AuthRequired, "claude.authentication_failed", "Claude Code is not logged in.")},
			env:    []string{"ANTHROPIC_API_KEY=synthetic", "COAGENT8_API_KEY_BILLING=claude"}, ran: true,
			want: "failed AUTH_REQUIRED claude.authentication_failed", inMsg: []string{"Claude Code is not logged in."}},
		{name: "terminal refusal says which command", cfg: `{}`, terminal: true,
			want: "failed POLICY_DENIED consent.unsupported_client", inMsg: []string{"run `coagent8 governance allow m-default --unlisted` in a terminal"}},
		{name: "asked when logged in", cfg: askM, model: "m-ask", claude: &fakeBackend{auth: "authenticated"},
			want: "completed  ", ran: true, asked: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := config.FromList(append([]string{"HOME=/home/u"}, tt.env...))
			r := newRigEnv(t, tt.cfg, tt.claude, env)
			fc := &fakeConsent{}
			c := governor.Consent(fc)
			if tt.terminal {
				c = r.gate.Refusal()
			}
			backend := tt.backend
			if backend == "" {
				backend = "claude"
			}
			ws := tt.ws
			if ws == "" {
				ws = t.TempDir()
			}
			res := r.gov.Run(context.Background(), governor.Turn{Consent: c, Request: turn.Request{
				Backend: backend, Workspace: ws, Prompt: "q", Model: tt.model, SessionMode: "none"}})
			msg := ""
			if res.Outcome.Error != nil {
				msg = res.Outcome.Error.Message
			}
			got := []any{summary(res.Outcome), len(r.claude.ran()) > 0, len(fc.asked)}
			want := []any{tt.want, tt.ran, tt.asked}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Run (-want +got):\n%s\nmessage: %s", d, msg)
			}
			for _, s := range tt.inMsg {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q lacks %q", msg, s)
				}
			}
			if tt.name == "API-key billing on: no hint" && strings.Contains(msg, "COAGENT8_API_KEY_BILLING") {
				t.Errorf("billing is on, yet the message says it is off: %q", msg)
			}
			if strings.Contains(msg, "synthetic") {
				t.Errorf("a key value leaked into the message: %q", msg)
			}
		})
	}
}

// TestExplicitConfigMissing (item 13): a COAGENT8_CONFIG that names no
// file refuses turns naming the path, instead of running on the defaults.
func TestExplicitConfigMissing(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "cfg", "typo.json")
	env := config.FromList([]string{"HOME=" + home, "COAGENT8_CONFIG=" + path})
	fb := &fakeBackend{name: "claude"}
	runner, err := turn.New(turn.Options{Env: env, Backends: []adapter.Backend{fb}, Events: &event.Memory{}})
	if err != nil {
		t.Fatal(err)
	}
	gov, err := governor.New(governor.Options{Env: env, Runner: runner, ConfigPath: env.ConfigPath(), Events: &event.Memory{}})
	if err != nil {
		t.Fatal(err)
	}
	res := gov.Run(context.Background(), governor.Turn{Consent: &fakeConsent{}, Request: turn.Request{
		Backend: "claude", Workspace: t.TempDir(), Prompt: "q", SessionMode: "none"}})
	if got := summary(res.Outcome); got != "failed POLICY_DENIED config.missing" || len(fb.ran()) != 0 {
		t.Fatalf("outcome %q, ran %v; want a config.missing refusal and no turn", got, fb.ran())
	}
	if msg := res.Outcome.Error.Message; !strings.Contains(msg, filepath.Join("~", "cfg", "typo.json")) || strings.Contains(msg, home) {
		t.Errorf("message %q should name ~/cfg/typo.json, not the home path", msg)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(allowM), 0o600); err != nil {
		t.Fatal(err)
	}
	res = gov.Run(context.Background(), governor.Turn{Consent: &fakeConsent{}, Request: turn.Request{
		Backend: "claude", Workspace: t.TempDir(), Prompt: "q", SessionMode: "none"}})
	if got := summary(res.Outcome); got != "completed  " {
		t.Errorf("after creating the file: %q", got)
	}
}
