//go:build linux && amd64

package delegation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/adapter/claude"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/egress"
	egressledger "github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/evidence"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/secret"
	"github.com/coagent8/coagent8/internal/store"
)

// oauthToken is a synthetic Claude Code subscription token, built at run
// time.
func oauthToken() string {
	return "sk-ant-oat01-SYNTH" + strings.Repeat("o", 20) + "login" + strings.Repeat("9", 12)
}

// TestClaudeSubscriptionLoginThroughGate (issue 15 scope 3): the gate
// holds Claude Code's subscription login by reference — the
// claudeAiOauth.accessToken field of a credentials file shaped like
// ~/.claude/.credentials.json — and the read-profile turn's Claude Code
// 2.1.328 gets only a phantom in CLAUDE_CODE_OAUTH_TOKEN. The double sees
// the real token as Authorization: Bearer with the OAuth beta flag and no
// x-api-key, never the phantom; the answer is the double's.
func TestClaudeSubscriptionLoginThroughGate(t *testing.T) {
	rt, err := ResolveRuntime(pinnedCLI(t, "claude"))
	if err != nil {
		t.Fatal(err)
	}
	const model = "claude-sonnet-4-5"
	double := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "OAUTH-ANSWER"}})
	creds := filepath.Join(t.TempDir(), ".credentials.json")
	body := `{"claudeAiOauth":{"accessToken":"` + oauthToken() + `","refreshToken":"sk-ant-ort01-SYNTH` + strings.Repeat("r", 20) + `","expiresAt":4102444800000,"scopes":["user:inference"]}}`
	if err := os.WriteFile(creds, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ref, err := secret.ParseRef("file:" + creds + "#claudeAiOauth.accessToken")
	if err != nil {
		t.Fatal(err)
	}
	g := gateWith(t, double.URL(), ref)
	if k, err := g.CredentialKind(gate.Anthropic); err != nil || k != gate.OAuthToken {
		t.Fatalf("credential kind %v, %v; want oauth_token", k, err)
	}
	gr, phantom, err := g.Grant(context.Background(), gate.Spec{Provider: gate.Anthropic, Model: model, Job: "turn-oauth",
		TTL: time.Hour, MaxRequests: 10, MaxTokens: 1_000_000, MaxSpend: gate.USD(50),
		Price: &gate.Price{InputPerMTok: 15, OutputPerMTok: 15, CacheWritePerMTok: 15, CacheReadPerMTok: 15}})
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t)
	qualify(t, r, rt)
	l, err := r.ReadLauncher(ReadTurn{Runtime: rt, Phantom: phantom, PhantomVar: "CLAUDE_CODE_OAUTH_TOKEN", Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	b := claude.New(config.FromList([]string{"CLAUDE_PATH=" + pinnedCLI(t, "claude"), "PATH=/usr/bin:/bin"}), claude.Options{})
	res, err := b.Run(testCtx(t), adapter.Turn{Prompt: "hi", Workspace: canonicalTemp(t), Model: model, Launcher: l})
	if err != nil {
		t.Fatalf("subscription-login turn: %v", err)
	}
	if res.Text != "OAUTH-ANSWER" {
		t.Errorf("answer = %q", res.Text)
	}
	reqs := double.Requests()
	if len(reqs) == 0 {
		t.Fatal("the double saw no request")
	}
	for _, q := range reqs {
		if got := q.Header.Get("Authorization"); got != "Bearer "+oauthToken() || q.Header.Get("X-Api-Key") != "" {
			t.Errorf("%s %s: Authorization %q, x-api-key %q; want the real token as bearer only", q.Method, q.Path, redact.NewDiagnostic("").String(got), q.Header.Get("X-Api-Key"))
		}
		if !strings.Contains(q.Header.Get("Anthropic-Beta"), "oauth-2025-04-20") {
			t.Errorf("%s %s: anthropic-beta %q lacks the OAuth flag", q.Method, q.Path, q.Header.Get("Anthropic-Beta"))
		}
		if strings.Contains(string(q.Body), phantom.Reveal()) {
			t.Errorf("%s %s: the phantom reached the provider", q.Method, q.Path)
		}
	}
	if got, _ := g.Inspect(context.Background(), gr.ID); got.Used.Requests != int64(len(reqs)) {
		t.Errorf("grant counted %d requests, double saw %d", got.Used.Requests, len(reqs))
	}
}

// TestChatGPTLoginRefused (issue 15 scope 3): Codex's ChatGPT login
// (its auth.json) cannot be carried through the gate: a grant for it is
// refused UNSUPPORTED gate.chatgpt_login, naming what to configure.
func TestChatGPTLoginRefused(t *testing.T) {
	for _, s := range []string{"file:/home/u/.codex/auth.json", "file:/home/u/.codex/auth.json#tokens.access_token", "file:/etc/c8/login.json#tokens.access_token"} {
		ref, err := secret.ParseRef(s)
		if err != nil {
			t.Fatal(err)
		}
		g := gateFor(t, gate.OpenAI, "http://127.0.0.1:9", ref)
		_, _, err = g.Grant(context.Background(), gate.Spec{Provider: gate.OpenAI, Model: "gpt-5", Job: "turn-x", TTL: time.Hour,
			MaxRequests: 1, MaxTokens: 1000, MaxSpend: gate.USD(1), Price: &gate.Price{InputPerMTok: 1, OutputPerMTok: 1}})
		if got := reasonOf(err); got != gate.ReasonChatGPTLogin || !strings.Contains(err.Error(), "OpenAI API key reference") {
			t.Errorf("%s: %v (reason %q), want %s naming an OpenAI API key reference", s, err, got, gate.ReasonChatGPTLogin)
		}
	}
}

// gateWith starts an Anthropic gate in front of upstream holding ref.
func gateWith(t *testing.T, upstream string, ref secret.Ref) *gate.Gate {
	return gateFor(t, gate.Anthropic, upstream, ref)
}

// gateFor is newGateFor with the credential reference ref (resolved
// against the real file system and an empty environment).
func gateFor(t *testing.T, p gate.Provider, upstream string, ref secret.Ref) *gate.Gate {
	t.Helper()
	return gateResolvingFor(t, p, upstream, ref, config.FromList(nil))
}

// gateResolving is gateWith resolving env references against env.
func gateResolving(t *testing.T, upstream string, ref secret.Ref, env config.Env) *gate.Gate {
	t.Helper()
	return gateResolvingFor(t, gate.Anthropic, upstream, ref, env)
}

func gateResolvingFor(t *testing.T, p gate.Provider, upstream string, ref secret.Ref, env config.Env) *gate.Gate {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	key, err := gate.LoadKey(filepath.Join(dir, "gate.key"))
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := egress.NewPolicy(egress.DefaultConfig())
	led, err := egressledger.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	ekey, err := evidence.LoadKey(filepath.Join(dir, "evidence.key"))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := egress.New(egress.Options{Policy: pol, Ledger: led, Key: ekey, Events: &event.Memory{}, Principal: "test"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(context.Background(), gate.Options{DB: db, Key: key, Egress: dec, Events: &event.Memory{},
		Secrets: &secret.Resolver{Env: env}, Credentials: map[gate.Provider]secret.Ref{p: ref},
		Upstreams: map[gate.Provider]string{p: upstream}, UnsafeAllowLoopbackUpstream: true, DrainTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// TestDelegateJobSubscriptionLogin: a candidate job behind a gate that
// holds the subscription login gives the CLI its phantom in
// CLAUDE_CODE_OAUTH_TOKEN too, so the provider gets the real token as a
// bearer with the OAuth flag.
func TestDelegateJobSubscriptionLogin(t *testing.T) {
	rt, err := ResolveRuntime(pinnedCLI(t, "claude"))
	if err != nil {
		t.Fatal(err)
	}
	const model = "claude-sonnet-4-5"
	double := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "JOB-DONE"}})
	ref, _ := secret.ParseRef("env:CLAUDE_CODE_OAUTH_TOKEN")
	g := gateResolving(t, double.URL(), ref, config.FromList([]string{"CLAUDE_CODE_OAUTH_TOKEN=" + oauthToken()}))
	gr, phantom, err := g.Grant(context.Background(), gate.Spec{Provider: gate.Anthropic, Model: model, Job: "job-oauth",
		TTL: time.Hour, MaxRequests: 10, MaxTokens: 1_000_000, MaxSpend: gate.USD(50),
		Price: &gate.Price{InputPerMTok: 15, OutputPerMTok: 15, CacheWritePerMTok: 15, CacheReadPerMTok: 15}})
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t)
	qualify(t, r, rt)
	res, err := r.Run(testCtx(t), Job{Runtime: rt, Model: model, Prompt: "hi", Workspace: canonicalTemp(t), CandidateDir: t.TempDir(),
		Phantom: phantom, Grant: gr.ID, Gate: g})
	if err != nil || !res.Receipt.Exit.Success() {
		t.Fatalf("job: %v %+v", err, res.Receipt.Exit)
	}
	reqs := double.Requests()
	if len(reqs) == 0 {
		t.Fatal("the double saw no request")
	}
	for _, q := range reqs {
		if q.Header.Get("Authorization") != "Bearer "+oauthToken() || !strings.Contains(q.Header.Get("Anthropic-Beta"), "oauth-2025-04-20") {
			t.Errorf("%s %s: not the real token as an OAuth bearer", q.Method, q.Path)
		}
	}
}
