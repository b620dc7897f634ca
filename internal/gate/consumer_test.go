package gate

import (
	"context"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/secret"
)

// TestCredentialsResolveOnlyForTheirConsumer: a grant can only use the
// reference declared for its provider in gate.credentials (issue 18
// scope 3, R-101): an arbitrary file or an undeclared variable is
// refused at grant time with a security event naming the reference.
func TestCredentialsResolveOnlyForTheirConsumer(t *testing.T) {
	tests := []struct {
		name     string
		provider Provider
		ref      string // "" = none (take the declared one)
		want     string // "" = granted
	}{
		{"declared reference", Anthropic, "env:REAL_ANTHROPIC", ""},
		{"no reference takes the declared one", OpenAI, "", ""},
		{"file:/etc/shadow", Anthropic, "file:/etc/shadow", ReasonUndeclared},
		{"undeclared env var", Anthropic, "env:HOME", ReasonUndeclared},
		{"the other provider's credential", OpenAI, "env:REAL_ANTHROPIC", ReasonUndeclared},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			s := spec(tt.provider)
			s.Secret = secret.Ref{}
			if tt.ref != "" {
				s.Secret, _ = secret.ParseRef(tt.ref)
			}
			gr, _, err := f.gate.Grant(context.Background(), s)
			if got := fault.From(err); (got == nil) != (tt.want == "") || (got != nil && got.Reason != tt.want) {
				t.Fatalf("Grant error %v, want reason %q", err, tt.want)
			}
			if tt.want == "" {
				want := map[Provider]string{Anthropic: "env:REAL_ANTHROPIC", OpenAI: "env:REAL_OPENAI"}[tt.provider]
				if gr.SecretRef != want {
					t.Errorf("grant stores %q, want the declared %q", gr.SecretRef, want)
				}
				return
			}
			last := f.events.Events()[len(f.events.Events())-1]
			if last.Reason != ReasonUndeclared || last.Code != "POLICY_DENIED" || !strings.Contains(last.Detail, tt.ref) {
				t.Errorf("event %+v, want a secret.undeclared refusal naming %s", last, tt.ref)
			}
			declared := map[Provider]string{Anthropic: "env:REAL_ANTHROPIC", OpenAI: "env:REAL_OPENAI"}[tt.provider]
			if msg := fault.From(err).Message; !strings.Contains(msg, "declares "+declared) {
				t.Errorf("refusal %q does not name the declared reference %s (a reference is no secret)", msg, declared)
			}
			if n := f.secrets.calls.Load(); n != 0 {
				t.Errorf("resolved %d times", n)
			}
		})
	}
}

// TestUndeclaredAtForwardTime: a grant whose reference is no longer the
// declared one (configuration changed), or a gate that declares nothing,
// forwards nothing and never resolves.
func TestUndeclaredAtForwardTime(t *testing.T) {
	other, _ := secret.ParseRef("env:ROTATED_ANTHROPIC")
	for name, creds := range map[string]map[Provider]secret.Ref{"declaration changed": {Anthropic: other}, "nothing declared": nil} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil)
			gr, phantom := f.grant(spec(Anthropic))
			g2, err := New(context.Background(), Options{DB: f.db, Key: f.gate.opts.Key, Egress: f.egress, Secrets: f.secrets,
				Credentials: creds, Events: f.events, Upstreams: map[Provider]string{Anthropic: f.anth.URL()}, UnsafeAllowLoopbackUpstream: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { g2.Close() })
			f.gate = g2
			f.srv.Config.Handler = g2
			resp := f.call(Anthropic, phantom, gr.Model, true)
			readAll(t, resp)
			if got := resp.Header.Get("X-Coagent8-Gate-Reason"); got != ReasonUndeclared {
				t.Errorf("reason %q, want %q", got, ReasonUndeclared)
			}
			if n := f.secrets.calls.Load(); n != 0 || len(f.anth.Requests()) != 0 {
				t.Errorf("resolved %d times, %d requests upstream; want none", n, len(f.anth.Requests()))
			}
			if g := f.settled(gr.ID); g.Reserved != (Counters{}) {
				t.Errorf("reservation left open: %+v", g.Reserved)
			}
		})
	}
}

// TestOneReferenceOneProvider: a reference declared for both providers
// is refused when the gate opens (gate.credentials, naming both). A
// credential is one provider's, and the value's kind check is
// per reference: with env:CLAUDE_CODE_OAUTH_TOKEN declared for
// anthropic and openai, whichever provider map iteration visited last
// decided the kind, so Claude Code's subscription token was sent to
// OpenAI as a Bearer key in some runs and refused for Anthropic in others.
func TestOneReferenceOneProvider(t *testing.T) {
	f := newFixture(t, nil)
	ref, _ := secret.ParseRef("env:" + claudeOAuthVar)
	g, err := New(context.Background(), Options{DB: f.db, Key: f.gate.opts.Key, Egress: f.egress, Secrets: f.secrets,
		Credentials: map[Provider]secret.Ref{Anthropic: ref, OpenAI: ref}})
	if err == nil {
		g.Close()
	}
	fe := fault.From(err)
	if fe == nil || fe.Reason != "gate.credentials" || !strings.Contains(fe.Message, "anthropic") || !strings.Contains(fe.Message, "openai") {
		t.Fatalf("New with one reference for both providers: %v, want gate.credentials naming both", err)
	}
}
