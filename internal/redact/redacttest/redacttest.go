// Package redacttest provides synthetic credentials ("canaries") of every
// format the redactor knows and a leak check, so any package can push them
// through its output paths — MCP results, logs, stored files — and prove
// that none survives (R-047, issue 4 "canary through every path").
//
// Canaries are generated at run time from a pseudo-random source: none is a
// real credential, and no checksum-valid token is ever committed.
package redacttest

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/redact"
)

// Canary is one synthetic credential in its usual surroundings.
type Canary struct {
	// Name identifies the variant, e.g. "github-classic".
	Name string
	// Kind is the kind the redactor reports for it.
	Kind redact.Kind
	// Profile is the least profile that must redact it.
	Profile redact.Profile
	// Text is what to plant, e.g. "Authorization: Bearer <token>".
	Text string
	// Want is Text after redaction.
	Want string
	// Needles are the random parts of the secret: no run of [FragmentLen]
	// bytes of them may appear in any output.
	Needles []string
}

// FragmentLen is the length of the secret runs [Leaks] looks for.
const FragmentLen = 6

// Canaries returns one canary per answer-profile format variant, from a
// fixed seed (reproducible failures).
func Canaries() []Canary { return Generate(rand.New(rand.NewPCG(4, 47))) }

// All returns [Canaries] plus [DiagnosticCanaries].
func All() []Canary {
	return append(Canaries(), DiagnosticCanaries(rand.New(rand.NewPCG(4, 50)))...)
}

// Generate returns one answer-profile canary per format variant drawn
// from rng.
func Generate(rng *rand.Rand) []Canary {
	g := gen{rng}
	var cs []Canary
	add := func(name string, k redact.Kind, secret string, needles ...string) {
		cs = append(cs, Canary{Name: name, Kind: k, Profile: redact.Answer, Text: secret,
			Want: k.Marker(), Needles: needles})
	}
	tok := func(prefix string, body string) (string, string) { return prefix + body, body }
	s, b := tok("sk-proj-", g.tok(156))
	add("openai-project", redact.KindOpenAI, s, b)
	b1, b2 := g.alnum(20), g.alnum(20)
	add("openai-legacy", redact.KindOpenAI, "sk-"+b1+"T3BlbkFJ"+b2, b1, b2)
	s, b = tok("sk-svcacct-", g.tok(120))
	add("openai-service-account", redact.KindOpenAI, s, b)
	s, b = tok("sk-ant-api03-", g.tok(93)+"AA")
	add("anthropic-api", redact.KindAnthropic, s, b)
	b1, b2 = g.tok(60), g.tok(40)
	add("anthropic-oauth", redact.KindAnthropic, "sk-ant-oat01-"+b1+"."+b2, b1, b2)
	s, b = tok("sk_live_", g.alnum(99))
	add("stripe-live", redact.KindStripe, s, b)
	s, b = tok("rk_test_", g.alnum(24))
	add("stripe-restricted-test", redact.KindStripe, s, b)
	for _, p := range []string{"ghp_", "gho_", "ghu_"} {
		s, b = tok(p, g.alnum(36))
		add("github-"+strings.TrimSuffix(p, "_"), redact.KindGitHub, s, b)
	}
	b1, b2 = g.tok(120), g.tok(300)
	add("github-installation-long", redact.KindGitHub, "ghs_"+g.digits(7)+"_"+b1+"."+b2, b1, b2)
	s, b = tok("github_pat_", g.alnum(22)+"_"+g.alnum(59))
	add("github-fine-grained", redact.KindGitHub, s, b)
	s, b = tok("glpat-", g.alnum(20))
	add("gitlab-legacy", redact.KindGitLab, s, b)
	b1, b2 = g.tok(27), g.alnum(9)
	add("gitlab-routable", redact.KindGitLab, "glpat-"+b1+".01."+b2, b1, b2)
	s, b = tok("ya29.", g.tok(180))
	add("google-oauth", redact.KindGoogle, s, b)
	b1, b2 = g.tok(90), g.tok(60)
	add("google-service-account", redact.KindGoogle, "ya29.c."+b1+"."+b2, b1, b2)
	s, b = tok("npm_", g.alnum(36))
	add("npm", redact.KindNPM, s, b)
	s, b = tok("hf_", g.letters(34))
	add("huggingface", redact.KindHuggingFace, s, b)
	s, b = tok("api_org_", g.letters(34))
	add("huggingface-org", redact.KindHuggingFace, s, b)
	b1 = g.alnum(24)
	add("slack-bot", redact.KindSlack, "xoxb-"+g.digits(12)+"-"+g.digits(13)+"-"+b1, b1)
	b1 = g.hex(64)
	add("slack-app", redact.KindSlack, "xapp-1-A"+g.upper(10)+"-"+g.digits(13)+"-"+b1, b1)
	b1 = g.alnum(24)
	cs = append(cs, Canary{Name: "slack-webhook", Kind: redact.KindSlackWebhook, Profile: redact.Answer,
		Text:    "https://hooks.slack.com/services/T" + g.upper(8) + "/B" + g.upper(10) + "/" + b1,
		Want:    "https://hooks.slack.com/services/" + redact.KindSlackWebhook.Marker(),
		Needles: []string{b1}})
	cs = append(cs, g.jwt())
	for _, p := range []string{"AKIA", "ASIA"} {
		s, b = tok(p, g.base32(16))
		add("aws-"+strings.ToLower(p), redact.KindAWS, s, b)
	}
	cs = append(cs, g.pem("RSA PRIVATE KEY"), g.pem("OPENSSH PRIVATE KEY"), g.pem("PRIVATE KEY"))
	b1 = g.tok(20) + g.digits(2) + "." + g.tok(20) + "~+/" + g.alnum(6)
	cs = append(cs, Canary{Name: "bearer", Kind: redact.KindBearer, Profile: redact.Answer,
		Text:    "Authorization: Bearer " + b1,
		Want:    "Authorization: Bearer " + redact.KindBearer.Marker(),
		Needles: []string{b1}})
	// The provider gate's phantom exactly as internal/gate mints it: "c8g_"
	// and 256 random bits in unpadded base64url (43 characters).
	s, b = tok("c8g_", base64.RawURLEncoding.EncodeToString(g.raw(32)))
	add("gate-phantom", redact.KindPhantom, s, b)
	return cs
}

// DiagnosticCanaries returns credentials only the diagnostic profile
// recognises: keyword assignments, HTTP Basic and URL userinfo.
func DiagnosticCanaries(rng *rand.Rand) []Canary {
	g := gen{rng}
	mk := func(name string, k redact.Kind, pre, secret, post string) Canary {
		return Canary{Name: name, Kind: k, Profile: redact.Diagnostic, Text: pre + secret + post,
			Want: pre + k.Marker() + post, Needles: []string{secret}}
	}
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:" + g.alnum(18)))
	return []Canary{
		mk("keyword-password", redact.KindSecret, "password=", g.alnum(14)+g.digits(2), ""),
		mk("keyword-yaml", redact.KindSecret, "client_secret: ", g.alnum(30), ""),
		mk("keyword-env", redact.KindSecret, "DB_PASSWORD=", g.alnum(20), ""),
		mk("keyword-json", redact.KindSecret, `{"api_key": "`, g.alnum(32), `"}`),
		mk("basic-auth", redact.KindBasic, "Authorization: Basic ", basic, ""),
		mk("url-credentials", redact.KindURLCredentials, "https://", "deploy:"+g.alnum(20), "@git.example.com/r.git"),
	}
}

// Leaks returns a description of every canary fragment found in haystack.
func Leaks(haystack []byte, cs []Canary) []string {
	grams := map[[FragmentLen]byte]string{}
	for _, c := range cs {
		for _, n := range c.Needles {
			for i := 0; i+FragmentLen <= len(n); i++ {
				grams[[FragmentLen]byte([]byte(n[i:]))] = c.Name
			}
		}
	}
	var found []string
	seen := map[string]bool{}
	for i := 0; i+FragmentLen <= len(haystack); i++ {
		name, ok := grams[[FragmentLen]byte(haystack[i:])]
		if ok && !seen[name] {
			seen[name] = true
			found = append(found, fmt.Sprintf("%s at byte %d: %q", name, i, haystack[i:i+FragmentLen]))
		}
	}
	return found
}

// AssertNoLeak fails t for every canary with a fragment in haystack.
func AssertNoLeak(t testing.TB, haystack []byte, cs []Canary) {
	t.Helper()
	for _, l := range Leaks(haystack, cs) {
		t.Errorf("secret leaked: %s", l)
	}
}
