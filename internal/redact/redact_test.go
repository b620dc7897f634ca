package redact_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/redact/redacttest"
)

// wrappers put a credential in the places answers and logs carry them
// (issue 4 tests: at least 15). Each must leave the surrounding bytes alone.
var wrappers = []struct {
	name string
	wrap func(string) string
}{
	{"plain", func(s string) string { return s }},
	{"double-quoted", printf(`token "%s" set`)},
	{"single-quoted", printf(`key='%s'`)},
	{"backticks", printf("use `%s` here")},
	{"bold", printf("**%s**")},
	{"parentheses", printf("(see %s)")},
	{"trailing-period", printf("The key is %s.")},
	{"trailing-comma", printf("%s, then")},
	{"statement", printf("x = %s;")},
	{"code-block", printf("```sh\n%s\n```\n")},
	{"json-escaped", jsonString},
	{"json-escaped-twice", func(s string) string { return jsonString(jsonString(s)) }},
	{"ansi-colour", printf("\x1b[31m%s\x1b[0m")},
	{"ansi-bold-colour", printf("\x1b[1;32m%s\x1b[0m\n")},
	{"url-path", printf("https://api.example.com/v1/keys/%s")},
	{"url-query", printf("https://x.example/cb?access=%s&b=1")},
	{"env-line", printf("export API_KEY=%s\n")},
	{"curl-header", printf(`curl -H "X-Auth: %s" https://x.example`)},
	{"yaml", printf("auth:\n  key: %s\n")},
	{"crlf", printf("line\r\n%s\r\nend")},
	{"markdown-link", printf("[key](%s)")},
	{"html", printf("<code>%s</code>")},
	{"utf8", printf("clé: «%s» ✓")},
	{"percent-escaped-space", printf("q=%%20%s")},
}

func printf(format string) func(string) string {
	return func(s string) string { return fmt.Sprintf(format, s) }
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestAnswerPositives checks R-048: every format in every wrapper is
// replaced by its marker, every other byte is identical, one-shot and
// streamed.
func TestAnswerPositives(t *testing.T) {
	r := redact.NewAnswer()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range redacttest.Canaries() {
		for _, w := range wrappers {
			t.Run(c.Name+"/"+w.name, func(t *testing.T) {
				in, want := w.wrap(c.Text), w.wrap(c.Want)
				if got := r.String(in); got != want {
					t.Errorf("String(%q):\n%s", in, cmp.Diff(want, got))
				}
				if got := streamed(t, r, in, rng, 9); got != want {
					t.Errorf("streamed(%q):\n%s", in, cmp.Diff(want, got))
				}
			})
		}
	}
}

// TestAnswerNegatives checks R-049 and the AUD-P0-2 regression vectors:
// ordinary text and code pass through the answer profile unchanged.
func TestAnswerNegatives(t *testing.T) {
	inputs := []string{
		// AUD-P0-2 (contract.md §9).
		"const token = getToken(req);",
		"interface User { password: string; secret: Buffer }",
		"max_token = 4096",
		"const auth = useAuth();",
		"api_key=abcd1234efgh5678", // no longer removed from answers (P0-2 migration)
		//
		"const token = getToken();\npassword: string;\nauth=opts\n/home/alice/src/x.go\ndisk-usage",
		// Issue 4 and notes §7.
		"max_tokens=4096", "--tokenizer=bpe", "TOKENIZERS_PARALLELISM=false", "disk-usage",
		"risk-assessment-framework-v2", "task-list", "Use Bearer authentication for the API.",
		"password: process.env.DB_PASSWORD", "Authorization: Bearer ${TOKEN}",
		"Authorization: Bearer <YOUR_TOKEN>", "Authorization: Bearer YOUR_ACCESS_TOKEN_HERE",
		"Authorization: required", "sk-...", "ghp_xxx", "<YOUR_TOKEN>", "pk_live_" + strings.Repeat("a1", 12),
		"a.b.c.d.e", "config.api.token.value", "askAKIA", "the bearer of bad news",
		"https://bob:s3cret@git.example/r", // URL credentials: diagnostic profile only
		"ASIA and AKIA prefixes", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"-----BEGIN PUBLIC KEY-----", "eyJhbGciOi is how a JWT starts", "xoxb- tokens", "glpat-short",
		"import sklearn; sk-learn", "hf_hub_download(repo_id)", "npm_config_cache=/tmp",
		"c8g_config is read", "C8G_" + strings.Repeat("a1", 24), "abc8g_" + strings.Repeat("a1", 24),
	}
	r := redact.NewAnswer()
	for _, in := range inputs {
		if got := r.String(in); got != in {
			t.Errorf("String(%q) = %q, want unchanged", in, got)
		}
	}
}

// TestMarkerKeepsNothing checks R-055: the output holds no run of 4 bytes of
// a token's random part.
func TestMarkerKeepsNothing(t *testing.T) {
	r := redact.NewAnswer()
	for _, c := range redacttest.Canaries() {
		got := r.String(c.Text)
		for _, n := range c.Needles {
			for i := 0; i+4 <= len(n); i++ {
				if strings.Contains(got, n[i:i+4]) && !strings.Contains(c.Want, n[i:i+4]) {
					t.Errorf("%s: output %q keeps %q", c.Name, got, n[i:i+4])
					break
				}
			}
		}
	}
}

func TestKindMarker(t *testing.T) {
	if got, want := redact.KindGitHub.Marker(), "[REDACTED:github-token]"; got != want {
		t.Errorf("Marker = %q, want %q", got, want)
	}
	for _, k := range redact.Kinds() {
		if k.String() == "" {
			t.Errorf("kind %d has no name", k)
		}
	}
}

// TestPrefixNamesTheFormat: the marker names the format of the longest
// prefix, also where only a shorter prefix's rule matched — a key cut
// short at the end of input ("sk-ant-api03") is caught by the fail-closed
// rule of "sk-" and was marked openai-key. One-shot and streamed agree.
func TestPrefixNamesTheFormat(t *testing.T) {
	anthropic, openai := redact.KindAnthropic.Marker(), redact.KindOpenAI.Marker()
	tests := []struct{ in, want string }{
		{"sk-ant-api03", anthropic},
		{"sk-ant-xxxx", anthropic},
		{"x sk-ant-_Z9cc1X", "x " + anthropic},
		{"Bearer sk-ant-aaY-_", "Bearer " + anthropic},
		{"key: sk-ant-api03", "key: " + anthropic},
		{"sk-ant-api03-" + strings.Repeat("Q", 90) + "AA", anthropic},
		{"sk-ant-oat01-Abc", anthropic},
		// Other sk- formats keep their kind.
		{"sk-proj-abc", openai},
		{"sk-" + strings.Repeat("a1", 24), openai},
		{"sk-antelope" + strings.Repeat("a1", 16), openai},
	}
	r := redact.NewAnswer()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := r.String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := streamed(t, r, tt.in, rng, 5); got != tt.want {
				t.Errorf("streamed(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestPhantom: the provider gate's phantom credential ("c8g_" and 43
// base64url characters, internal/gate) is replaced in every profile,
// also behind an auth scheme or an assignment; a shorter body, another
// case or a glued word is left alone (mid-text: at the end of input any
// anchor with eight token bytes is cut-short fail-closed).
func TestPhantom(t *testing.T) {
	body := strings.Repeat("aZ9_-", 8) + "xY0"
	marker := redact.KindPhantom.Marker()
	tests := []struct{ name, in, want string }{
		{"bare", "c8g_" + body, marker},
		{"api-key-header", "x-api-key: c8g_" + body + "\r\n", "x-api-key: " + marker + "\r\n"},
		{"bearer", "Authorization: Bearer c8g_" + body, "Authorization: Bearer " + marker},
		{"env", "ANTHROPIC_API_KEY=c8g_" + body + " claude", "ANTHROPIC_API_KEY=" + marker + " claude"},
		{"json", `{"key":"c8g_` + body + `"}`, `{"key":"` + marker + `"}`},
		{"longer-run", "c8g_" + body + "-tail_more x", marker + " x"},
		{"sentence", "The phantom is c8g_" + body + ".", "The phantom is " + marker + "."},
		{"short-body", "c8g_" + body[:42] + " x", "c8g_" + body[:42] + " x"},
		{"glued-word", "abc8g_" + body + " x", "abc8g_" + body + " x"},
		{"upper-case", "C8G_" + body + " x", "C8G_" + body + " x"},
		{"identifier", "c8g_tokenizer_settings are read", "c8g_tokenizer_settings are read"},
		{"prefix-only", "c8g_ and c8g. x", "c8g_ and c8g. x"},
	}
	rng := rand.New(rand.NewPCG(8, 4))
	for _, r := range []*redact.Redactor{redact.NewAnswer(), redact.NewDiagnostic("/home/u")} {
		for _, tt := range tests {
			t.Run(r.Profile().String()+"/"+tt.name, func(t *testing.T) {
				if got := r.String(tt.in); got != tt.want {
					t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
				}
				if got := streamed(t, r, tt.in, rng, 7); got != tt.want {
					t.Errorf("streamed(%q) = %q, want %q", tt.in, got, tt.want)
				}
			})
		}
	}
}

// TestBoundAfterRedaction checks R-053's example: an sk-proj- token at
// offset 95 and a 100-byte limit leave no "sk-" fragment.
func TestBoundAfterRedaction(t *testing.T) {
	r := redact.NewAnswer()
	tok := "sk-proj-" + strings.Repeat("Ab3_", 30)
	s := strings.Repeat("x", 95) + " " + tok + " tail"
	got, cut := r.Bound(s, 100)
	if !cut || len(got) > 100 || strings.Contains(got, "sk-") {
		t.Errorf("Bound = %q, %v; want ≤100 bytes, cut, no sk-", got, cut)
	}
	if got, cut := r.Bound("héllo", 2); got != "h" || !cut {
		t.Errorf("Bound UTF-8 = %q, %v; want %q, true", got, cut, "h")
	}
	if got, cut := r.Bound("short", 10); got != "short" || cut {
		t.Errorf("Bound short = %q, %v", got, cut)
	}
}

// TestChangesAgreesWithBytes: Changes reports exactly when Bytes would
// return other bytes, for every profile and a credential or clean text.
func TestChangesAgreesWithBytes(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("Q", 93) + "AA"
	inputs := []string{"", "plain text, no secret", "key " + key + " end", "password=" + strings.Repeat("x", 12), "Bearer " + strings.Repeat("a", 40)}
	for _, r := range []*redact.Redactor{redact.NewAnswer(), redact.NewDiagnostic("")} {
		for _, in := range inputs {
			out := r.Bytes([]byte(in))
			if got, want := r.Changes([]byte(in)), string(out) != in; got != want {
				t.Errorf("%v Changes(%q) = %v, want %v (Bytes gave %q)", r.Profile(), in, got, want, out)
			}
		}
	}
	r := redact.NewAnswer()
	clean := []byte(strings.Repeat("func main() { fmt.Println(\"hello\") } ", 20))
	if n := testing.AllocsPerRun(100, func() { r.Changes(clean) }); n != 0 {
		t.Errorf("Changes of clean input allocates %v times, want 0", n)
	}
}

// TestTrafficKeepsPhantom: NewTraffic is the answer profile without the
// gate's phantom (provider traffic carries the agent's own phantom
// harmlessly); every other credential format is still found.
func TestTrafficKeepsPhantom(t *testing.T) {
	phantom := "c8g_" + strings.Repeat("aZ9_-", 8) + "xY0"
	aws := "AKIA" + strings.Repeat("Q", 16)
	tr := redact.NewTraffic()
	for _, tt := range []struct{ in, want string }{
		{"ANTHROPIC_API_KEY=" + phantom, "ANTHROPIC_API_KEY=" + phantom},
		{"id " + aws + " and " + phantom, "id " + redact.NewAnswer().String(aws) + " and " + phantom},
	} {
		if got := tr.String(tt.in); got != tt.want {
			t.Errorf("NewTraffic().String(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if tr.Changes([]byte(phantom)) {
			t.Errorf("NewTraffic().Changes(phantom) = true, want false")
		}
	}
	if got := redact.NewAnswer().String(phantom); got == phantom {
		t.Errorf("NewAnswer() kept the phantom %q", got)
	}
}
