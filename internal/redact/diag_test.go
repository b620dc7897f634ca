package redact_test

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/redact/redacttest"
)

// TestDiagnostic checks and the keyword pitfalls of notes §2.
func TestDiagnostic(t *testing.T) {
	secret := redact.KindSecret.Marker()
	tests := []struct {
		name, home, in, want string
	}{
		{"R-050 password", "", "password: hunter2", "password: " + secret},
		{"R-050 url", "", "https://bob:s3cret@git.example/r", "https://" + redact.KindURLCredentials.Marker() + "@git.example/r"},
		{"R-050 home", "/home/alice", "/home/alice/proj/x", "~/proj/x"},
		{"R-051 code", "", "const token = getToken();", "const token = getToken();"},
		{"R-051 literal", "", "token=abcd1234efgh5678", "token=" + secret},
		{"R-052 prefix of another user", "/home/al", "/home/alice/x", "/home/alice/x"},
		{"R-052 own home", "/home/al", "/home/al/x", "~/x"},
		{"home alone", "/home/al", "cd /home/al; ls", "cd ~; ls"},
		{"home end of sentence", "/home/al", "in /home/al.", "in ~."},
		{"home other file", "/home/al", "/home/al.bak/x", "/home/al.bak/x"},
		{"home inside path", "/home/al", "/srv/home/al/x", "/srv/home/al/x"},
		{"home json-escaped", "/home/al", `{"p":"\/home\/al\/x"}`, `{"p":"~\/x"}`},
		{"home windows", `C:\Users\Al`, `open c:\users\al\x.txt`, `open ~\x.txt`},
		{"home windows json", `C:\Users\Al`, `"C:\\Users\\Al\\x"`, `"~\\x"`},
		{"root home ignored", "/", "/etc/passwd", "/etc/passwd"},
		{"type name", "", "interface User { password: string; secret: Buffer }", "interface User { password: string; secret: Buffer }"},
		{"reference", "", "password: process.env.DB_PASSWORD", "password: process.env.DB_PASSWORD"},
		{"template", "", "token=${GITHUB_TOKEN}", "token=${GITHUB_TOKEN}"},
		{"max tokens", "", "max_tokens=4096 max_token = 4096", "max_tokens=4096 max_token = 4096"},
		{"tokenizer", "", "--tokenizer=bpe TOKENIZERS_PARALLELISM=false", "--tokenizer=bpe TOKENIZERS_PARALLELISM=false"},
		{"author", "", "author=bob authority: x", "author=bob authority: x"},
		{"npm authToken substring", "", "_authToken=abcdef123", "_authToken=abcdef123"},
		{"comparison", "", `if token == "abc123def"`, `if token == "abc123def"`},
		{"header required", "", "Authorization: required", "Authorization: required"},
		{"bearer words", "", "Bearer authentication", "Bearer authentication"},
		{"compound env", "", "GITHUB_TOKEN=abc123xyz789", "GITHUB_TOKEN=" + secret},
		{"x-api-key header", "", "X-Api-Key: k3yk3yk3y", "X-Api-Key: " + secret},
		{"json quoted", "", `{"password":"p@ss w0rd","user":"u"}`, `{"password":"` + secret + `","user":"u"}`},
		{"json escaped", "", `"{\"token\":\"abc123def\"}"`, `"{\"token\":\"` + secret + `\"}"`},
		{"query param", "", "GET /cb?access_token=abc123def&state=1", "GET /cb?access_token=" + secret + "&state=1"},
		{"go assign", "", `password := "hunter22"`, `password := "` + secret + `"`},
		{"format kind wins", "", "token=ghp_" + "abcdefghijABCDEFGHIJ0123456789abcdef", "token=" + redact.KindGitHub.Marker()},
		{"basic", "", "Authorization: Basic ZGVwbG95OnMzY3JldA==", "Authorization: Basic " + redact.KindBasic.Marker()},
		{"basic words", "", "Basic authentication is weak", "Basic authentication is weak"},
		{"url no password", "", "ssh://git@github.com/x", "ssh://git@github.com/x"},
		{"url at in password", "", "https://u:p@ss@h.example/x", "https://" + redact.KindURLCredentials.Marker() + "@h.example/x"},
		{"url port", "", "http://host:8080/a@b", "http://host:8080/a@b"},
		// Issue 19 item 12: a keyword that ends a quoted value is not a key.
		{"quoted path value", "", `context file "../../etc/passwd": give the path inside the workspace without '..'`, `context file "../../etc/passwd": give the path inside the workspace without '..'`},
		{"quoted sentence value", "", `'my api_key': unreadable here`, `'my api_key': unreadable here`},
		{"escaped quoted path", "", `{"msg":"file \"/run/x/token\": give a path"}`, `{"msg":"file \"/run/x/token\": give a path"}`},
		{"single quoted key", "", `'passwd': 'abc123def'`, `'passwd': '` + secret + `'`},
		{"dotted quoted key", "", `"spring.datasource.password": "hunter22"`, `"spring.datasource.password": "` + secret + `"`},
		{"unquoted path key", "", "/run/secrets/db_password: hunter22", "/run/secrets/db_password: " + secret},
		// ...but a quoted key that is not whole still guards a quoted value:
		// these are JSON key/value pairs, not a message about a value.
		{"quoted key with space", "", `{"DB Password": "hunter22"}`, `{"DB Password": "` + secret + `"}`},
		{"quoted path key", "", `"/run/secrets/db_password": "hunter22"`, `"/run/secrets/db_password": "` + secret + `"`},
		{"quoted colon key", "", `{"settings:password":"hunter22"}`, `{"settings:password":"` + secret + `"}`},
		{"escaped quoted key with space", "", `"{\"db password\":\"hunter22\"}"`, `"{\"db password\":\"` + secret + `\"}"`},
		{"quoted path value bare word", "", `file "/x/db_password": hunter22 is missing`, `file "/x/db_password": hunter22 is missing`},
		{"answer rules too", "", "key sk-proj-" + "AAAAbbbbCCCCdddd1234", "key " + redact.KindOpenAI.Marker()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := redact.NewDiagnostic(tt.home)
			if got := r.String(tt.in); got != tt.want {
				t.Errorf("String(%q):\n%s", tt.in, cmp.Diff(tt.want, got))
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(tt.in))))
			for range 20 {
				if got := streamed(t, r, tt.in, rng, 5); got != tt.want {
					t.Fatalf("streamed(%q):\n%s", tt.in, cmp.Diff(tt.want, got))
				}
			}
		})
	}
}

// TestDiagnosticCanaries runs the diagnostic canaries through both profiles:
// redacted in diagnostics, untouched in answers.
func TestDiagnosticCanaries(t *testing.T) {
	diag, ans := redact.NewDiagnostic("/home/u"), redact.NewAnswer()
	for _, c := range redacttest.DiagnosticCanaries(rand.New(rand.NewPCG(3, 3))) {
		if got := diag.String(c.Text); got != c.Want {
			t.Errorf("%s: diagnostic String(%q):\n%s", c.Name, c.Text, cmp.Diff(c.Want, got))
		}
		if got := ans.String(c.Text); got != c.Text {
			t.Errorf("%s: answer String(%q) = %q, want unchanged", c.Name, c.Text, got)
		}
	}
	for _, c := range redacttest.Canaries() {
		if got := diag.String(c.Text); got != c.Want {
			t.Errorf("%s: diagnostic String(%q):\n%s", c.Name, c.Text, cmp.Diff(c.Want, got))
		}
	}
}
