package gate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/secret"
)

// TestKindResolver (issue 15 scope 3): references resolve by kind — a
// JSON-field file reference reads that field of the file as it is now —
// and a value whose form is not the declared kind is refused, so an
// OAuth token is never sent as an API key or the reverse.
func TestKindResolver(t *testing.T) {
	dir := t.TempDir()
	oat := "sk-ant-oat01-" + strings.Repeat("t", 30)
	api := "sk-ant-api03-" + strings.Repeat("k", 30)
	creds := filepath.Join(dir, ".credentials.json")
	os.WriteFile(creds, []byte(`{"claudeAiOauth":{"accessToken":"`+oat+`"},"n":1}`), 0o600)
	keyFile := filepath.Join(dir, "key")
	os.WriteFile(keyFile, []byte(api+"\n"), 0o600)
	env := config.FromList([]string{"CLAUDE_CODE_OAUTH_TOKEN=" + oat, "KEY=" + api, "JWT=eyJhbGciOi.x.y", "SWAPPED=" + oat})
	ref := func(s string) secret.Ref { r, _ := secret.ParseRef(s); return r }
	for _, tc := range []struct {
		name, ref string
		provider  Provider
		kind      CredentialKind
		want      string // "" = refused
	}{
		{"oauth json field", "file:" + creds + "#claudeAiOauth.accessToken", Anthropic, OAuthToken, oat},
		{"oauth variable", "env:CLAUDE_CODE_OAUTH_TOKEN", Anthropic, OAuthToken, oat},
		{"api key file", "file:" + keyFile, Anthropic, APIKey, api},
		{"api key variable", "env:KEY", Anthropic, APIKey, api},
		{"oauth token where an api key is declared", "env:SWAPPED", Anthropic, APIKey, ""},
		{"missing json field", "file:" + creds + "#claudeAiOauth.refreshToken", Anthropic, APIKey, ""},
		{"non-string json field", "file:" + creds + "#n", Anthropic, APIKey, ""},
		{"chatgpt access token as openai key", "env:JWT", OpenAI, APIKey, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ref(tc.ref)
			if got := KindOf(tc.provider, r); got != tc.kind {
				t.Errorf("KindOf = %v, want %v", got, tc.kind)
			}
			o := withKinds(Options{Secrets: secret.Resolver{Env: env}, Credentials: map[Provider]secret.Ref{tc.provider: r}})
			v, err := o.Secrets.Resolve(r)
			var be *secret.BindingError
			switch {
			case tc.want == "" && !errors.As(err, &be):
				t.Errorf("resolved %v, want a binding error", err)
			case tc.want != "" && (err != nil || v.Reveal() != tc.want):
				t.Errorf("resolve: err %v, value ok %v", err, v.Reveal() == tc.want)
			}
			if err != nil && (strings.Contains(err.Error(), oat) || strings.Contains(err.Error(), api)) {
				t.Error("the error carries the credential")
			}
		})
	}
}

// TestOAuthCredentialHeader: with an OAuth token declared for Anthropic
// the injected credential is Authorization: Bearer (decided there), never
// x-api-key.
func TestOAuthCredentialHeader(t *testing.T) {
	w := wire{}
	w.forward = append(w.forward, egressHeader("Anthropic-Version", "2023-06-01"), egressHeader("X-Api-Key", placeholder()))
	w.credentialIn("Authorization")
	h := w.header("sk-ant-oat01-real", Anthropic)
	if h.Get("Authorization") != "Bearer sk-ant-oat01-real" || h.Get("X-Api-Key") != "" || w.forward[0].Name != "Anthropic-Version" {
		t.Errorf("header = %v (forward %v)", h, w.forward)
	}
}

func egressHeader(name, value string) egress.Header { return egress.Header{Name: name, Value: value} }
func placeholder() string                           { return egress.CredentialPlaceholder }
