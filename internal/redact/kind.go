package redact

// Kind names a class of credential. The marker written in place of a secret
// is "[REDACTED:" + Kind.String() + "]" (D-6); it keeps no character of the
// secret.
type Kind uint8

// Kinds of credential. The set is closed; [Kind.String] panics on others.
const (
	KindOpenAI Kind = iota + 1
	KindAnthropic
	KindStripe
	KindGitHub
	KindGitLab
	KindGoogle
	KindNPM
	KindHuggingFace
	KindSlack
	KindSlackWebhook
	KindJWT
	KindAWS
	KindPrivateKey
	KindBearer
	// KindPhantom is the provider gate's phantom credential (internal/gate):
	// a bearer for the gate while its grant lives.
	KindPhantom
	// Diagnostic-profile kinds.
	KindBasic
	KindURLCredentials
	KindSecret
	// KindHome is the home directory; it is replaced by "~", not a marker.
	KindHome
	kindCount
)

var kindNames = [kindCount]string{
	KindOpenAI:         "openai-key",
	KindAnthropic:      "anthropic-key",
	KindStripe:         "stripe-key",
	KindGitHub:         "github-token",
	KindGitLab:         "gitlab-token",
	KindGoogle:         "google-oauth-token",
	KindNPM:            "npm-token",
	KindHuggingFace:    "huggingface-token",
	KindSlack:          "slack-token",
	KindSlackWebhook:   "slack-webhook",
	KindJWT:            "jwt",
	KindAWS:            "aws-access-key-id",
	KindPrivateKey:     "private-key",
	KindBearer:         "bearer-token",
	KindPhantom:        "gate-phantom",
	KindBasic:          "basic-auth",
	KindURLCredentials: "url-credentials",
	KindSecret:         "secret",
	KindHome:           "home",
}

// markers holds the replacement text per kind, built once.
var markers = func() (m [kindCount]string) {
	for k := KindOpenAI; k < kindCount; k++ {
		m[k] = "[REDACTED:" + kindNames[k] + "]"
	}
	m[KindHome] = "~"
	return m
}()

// String returns the kind's stable name, e.g. "github-token".
func (k Kind) String() string {
	if k == 0 || k >= kindCount {
		panic("redact: unknown Kind")
	}
	return kindNames[k]
}

// Marker returns the text that replaces a secret of this kind, e.g.
// "[REDACTED:github-token]"; for [KindHome] it is "~".
func (k Kind) Marker() string {
	_ = k.String() // panics on an unknown kind
	return markers[k]
}

// Kinds returns every kind in declaration order (for tests and docs).
func Kinds() []Kind {
	ks := make([]Kind, 0, kindCount-1)
	for k := KindOpenAI; k < kindCount; k++ {
		ks = append(ks, k)
	}
	return ks
}
