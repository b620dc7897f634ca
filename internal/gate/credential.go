package gate

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/secret"
)

// CredentialKind is the form of a provider credential the gate holds,
// which decides how it is injected and which variable the sandboxed CLI
// gets its phantom in (issue 15 scope 3).
type CredentialKind int

const (
	// APIKey is a provider API key: x-api-key for Anthropic,
	// Authorization: Bearer for OpenAI.
	APIKey CredentialKind = iota
	// OAuthToken is Claude Code's subscription login (an OAuth access
	// token, sk-ant-oat…): Authorization: Bearer for Anthropic. Claude
	// Code sends such a credential when given CLAUDE_CODE_OAUTH_TOKEN,
	// with the oauth anthropic-beta flag the provider expects of it.
	OAuthToken
)

// String returns "api_key" or "oauth_token"; it panics on another value.
func (k CredentialKind) String() string {
	switch k {
	case APIKey:
		return "api_key"
	case OAuthToken:
		return "oauth_token"
	}
	panic("gate: unknown credential kind")
}

// Claude Code's subscription login, as a reference: its own variable, or
// the access-token field of its credentials file.
const (
	claudeOAuthVar   = "CLAUDE_CODE_OAUTH_TOKEN"
	claudeOAuthField = "claudeAiOauth.accessToken"
	oauthPrefix      = "sk-ant-oat"
)

// ReasonChatGPTLogin refuses a grant whose OpenAI credential is Codex's
// ChatGPT login.
const ReasonChatGPTLogin = "gate.chatgpt_login"

// KindOf returns the kind of credential ref declares for p, from the
// reference alone (the gate resolves a credential only to forward, R-126):
// for Anthropic, env:CLAUDE_CODE_OAUTH_TOKEN or a reference to the
// claudeAiOauth.accessToken field of a JSON file is [OAuthToken]; every
// other reference is [APIKey]. The resolved value is checked against the
// kind before anything is sent ([kindResolver]).
func KindOf(p Provider, ref secret.Ref) CredentialKind {
	if p != Anthropic {
		return APIKey
	}
	s := ref.String()
	if s == "env:"+claudeOAuthVar || strings.HasPrefix(s, "file:") && strings.HasSuffix(s, "#"+claudeOAuthField) {
		return OAuthToken
	}
	return APIKey
}

// CredentialKind returns the kind of the credential declared for p.
// Errors: fault.InvalidInput reason gate.credentials when none is
// declared.
func (g *Gate) CredentialKind(p Provider) (CredentialKind, error) {
	ref, ok := g.opts.Credentials[p]
	if !ok {
		return APIKey, fault.New(fault.InvalidInput, "gate.credentials", "no credential is declared for "+string(p))
	}
	return KindOf(p, ref), nil
}

// chatGPTLogin reports whether ref points at Codex's ChatGPT login (its
// auth.json, whole or a tokens field). That login cannot be carried: its
// access token is for the ChatGPT backend's own routes (which a turn
// cannot run without: accounts/check gates it), not the OpenAI API the
// gate admits, and its refresh token rotates on use (notes/delegation.md
// §3).
func chatGPTLogin(p Provider, ref secret.Ref) bool {
	if p != OpenAI || !strings.HasPrefix(ref.String(), "file:") {
		return false
	}
	path, field, _ := strings.Cut(strings.TrimPrefix(ref.String(), "file:"), "#")
	return filepath.Base(path) == "auth.json" && filepath.Base(filepath.Dir(path)) == ".codex" || strings.HasPrefix(field, "tokens.")
}

func chatGPTRefusal() error {
	return fault.New(fault.Unsupported, ReasonChatGPTLogin,
		"Codex's ChatGPT login cannot be carried through the gate (its tokens are for the ChatGPT backend, not the OpenAI API, and its refresh token rotates): "+
			"set gate.credentials.openai to an OpenAI API key reference (env:OPENAI_API_KEY or file:/abs/path holding the key)")
}

// kindResolver resolves the gate's credential references: a file
// reference "file:/abs/path#a.b" is field a.b (a JSON string) of the JSON
// file at /abs/path — how Claude Code's credentials file holds its login
// (#claudeAiOauth.accessToken); anything else goes to next. The file is
// re-read for every forward, so a token the user's Claude Code refreshed
// is the one sent. A resolved value whose form is not its declared kind
// (an OAuth token where an API key is declared, or the reverse; a
// ChatGPT access token as OpenAI key) is refused: it would be sent in the
// wrong header.
type kindResolver struct {
	next  SecretResolver
	kinds map[secret.Ref]CredentialKind
}

var errKind = errors.New("the credential's form is not the declared kind")

func (r kindResolver) Resolve(ref secret.Ref) (secret.Value, error) {
	v, err := r.resolve(ref)
	if err != nil {
		return v, err
	}
	s := v.Reveal()
	oauth := strings.HasPrefix(s, oauthPrefix)
	switch kind, ok := r.kinds[ref]; {
	case ok && kind == OAuthToken && !oauth, ok && kind == APIKey && oauth, strings.HasPrefix(s, "eyJ"):
		return secret.Value{}, &secret.BindingError{Ref: ref, Err: errKind}
	}
	return v, nil
}

func (r kindResolver) resolve(ref secret.Ref) (secret.Value, error) {
	path, field, ok := strings.Cut(strings.TrimPrefix(ref.String(), "file:"), "#")
	if !strings.HasPrefix(ref.String(), "file:") || !ok {
		if r.next == nil {
			return secret.Value{}, errNoResolver
		}
		return r.next.Resolve(ref)
	}
	b, err := secret.ReadFile(ref, path)
	if err != nil {
		return secret.Value{}, err
	}
	var doc any
	if json.Unmarshal(b, &doc) != nil {
		return secret.Value{}, &secret.BindingError{Ref: ref, Err: errors.New("file is not JSON")}
	}
	for _, k := range strings.Split(field, ".") {
		m, _ := doc.(map[string]any)
		doc = m[k]
	}
	s, _ := doc.(string)
	if s == "" {
		return secret.Value{}, &secret.BindingError{Ref: ref, Err: errors.New("field " + field + " is not a non-empty string")}
	}
	return secret.New(s), nil
}

// withKinds wraps opts.Secrets so every declared reference resolves
// through [kindResolver].
func withKinds(opts Options) Options {
	kinds := map[secret.Ref]CredentialKind{}
	for p, ref := range opts.Credentials {
		kinds[ref] = KindOf(p, ref)
	}
	if opts.Secrets != nil {
		opts.Secrets = kindResolver{next: opts.Secrets, kinds: kinds}
	}
	return opts
}

// credentialIn moves the injected credential to header name (sorted
// again), before the egress decision binds the header set.
func (w *wire) credentialIn(name string) {
	for i, f := range w.forward {
		if f.Value == egress.CredentialPlaceholder {
			w.forward[i].Name = name
		}
	}
	slices.SortFunc(w.forward, func(a, b egress.Header) int { return strings.Compare(a.Name, b.Name) })
}
