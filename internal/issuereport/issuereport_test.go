package issuereport

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact/redacttest"
)

const home = "/home/alice"

// TestCanary: no fragment of any synthetic credential and no home path
// reaches the title, the body or the link.
func TestCanary(t *testing.T) {
	cs := redacttest.All()
	var plant []string
	for _, c := range cs {
		plant = append(plant, c.Text)
	}
	secrets := strings.Join(plant, "\n")
	in := Input{
		ErrorMessage: "crash reading " + home + "/proj/main.go with " + cs[0].Text + "\n" + secrets,
		Context:      "env dump:\n" + secrets + "\nother user /home/bob/x and C:\\Users\\carol\\y",
		Doctor:       map[string]any{"stderr": secrets, "path": home + "/.gemini/settings.json"},
		LastError:    fault.Wrap(fault.ProcessError, "x.y", "failed in "+home+"/ws", errors.New(secrets)),
		Home:         home,
	}
	r := Build(in)
	for name, out := range map[string]string{"title": r.Title, "body": r.Body, "url": r.IssueURL} {
		redacttest.AssertNoLeak(t, []byte(out), cs)
		if name == "url" {
			u, err := url.Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			out = u.Query().Get("title") + u.Query().Get("body")
			redacttest.AssertNoLeak(t, []byte(out), cs)
		}
		for _, p := range []string{home, "alice", "/home/bob", "carol"} {
			if strings.Contains(out, p) {
				t.Errorf("%s contains %q", name, p)
			}
		}
	}
	if !strings.Contains(r.Body, "~/proj/main.go") && !strings.Contains(r.Body, "~/ws") {
		t.Errorf("home paths not shown as ~:\n%s", r.Body)
	}
}

func TestBuild(t *testing.T) {
	in := Input{
		ErrorMessage: "\n  review failed: CLI_NOT_FOUND codex missing\nsecond line",
		Context:      "steps:\n```go\nfunc secretSauce() {}\n```\nthen\ndiff --git a/x.go b/x.go\nindex 1..2\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-old code\n+new code\nafter the diff",
		Versions:     Versions{Coagent8: "0.1.0", Go: "go1.26.8", OS: "linux/amd64", Backends: map[string]string{"claude": "2.1.328", "agy": ""}},
		LastError:    fault.New(fault.CLINotFound, "cli.not_found", "codex CLI not found"),
	}
	r := Build(in)
	if r.Title != "[Bug]: review failed: CLI_NOT_FOUND codex missing" {
		t.Errorf("Title = %q", r.Title)
	}
	for _, want := range []string{"[code block removed]", "[diff removed]", "after the diff", "then",
		"code: CLI_NOT_FOUND\nreason: cli.not_found\nmessage: codex CLI not found",
		"claude: 2.1.328", "agy: not installed", "coagent8: 0.1.0"} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("body lacks %q:\n%s", want, r.Body)
		}
	}
	for _, not := range []string{"secretSauce", "old code", "new code", "Doctor summary"} {
		if strings.Contains(r.Body, not) {
			t.Errorf("body contains %q", not)
		}
	}
	u, err := url.Parse(r.IssueURL)
	if err != nil || u.Scheme != "https" || u.Host != "github.com" || u.Path != "/coagent8/coagent8/issues/new" {
		t.Fatalf("IssueURL = %q (%v)", r.IssueURL, err)
	}
	got := map[string]string{"title": u.Query().Get("title"), "body": u.Query().Get("body")}
	if diff := cmp.Diff(map[string]string{"title": r.Title, "body": r.Body}, got); diff != "" {
		t.Errorf("link does not round-trip (-want +got):\n%s", diff)
	}
}

func TestBounds(t *testing.T) {
	long := strings.Repeat("é\"&<", 3000)
	r := Build(Input{ErrorMessage: long, Context: long, Doctor: map[string]string{"d": long}, LastError: errors.New(long)})
	if len(r.Body) > MaxBody || !utf8.ValidString(r.Body) {
		t.Errorf("body %d bytes (valid UTF-8 %v), limit %d", len(r.Body), utf8.ValidString(r.Body), MaxBody)
	}
	if n := utf8.RuneCountInString(strings.TrimPrefix(r.Title, "[Bug]: ")); n > MaxTitleRun {
		t.Errorf("title first line is %d runes", n)
	}
	if len(r.IssueURL) > MaxURL {
		t.Errorf("URL is %d bytes, limit %d", len(r.IssueURL), MaxURL)
	}
	u, err := url.Parse(r.IssueURL)
	if err != nil || !strings.Contains(u.Query().Get("body"), "cut to fit the link") || !utf8.ValidString(u.Query().Get("body")) {
		t.Errorf("long link not cut cleanly: %v", err)
	}
	if r := Build(Input{}); r.Title != "[Bug]: coagent8 problem report" {
		t.Errorf("empty input title = %q", r.Title)
	}
}

// TestKeepsUsefulText: paths, commit ids and ordinary words survive.
func TestKeepsUsefulText(t *testing.T) {
	msg := "panic in internal/adapter/agy/stream.go:123 at 0123456789abcdef0123456789abcdef01234567"
	if r := Build(Input{ErrorMessage: msg}); !strings.Contains(r.Body, msg) {
		t.Errorf("useful text scrubbed:\n%s", r.Body)
	}
}

// TestCoagent8VersionSurvives (issue 18 item 2): coagent8's own version,
// a Go pseudo-version included, is shown as built; a token in its place
// is still scrubbed.
func TestCoagent8VersionSurvives(t *testing.T) {
	token := "sk" + strings.Repeat("Ab3", 10)
	for _, tc := range []struct{ version, want string }{
		{"v0.0.0-20261202003906-cb32f7be49d5", "coagent8: v0.0.0-20261202003906-cb32f7be49d5\ngo: go1.26.8"},
		{"v1.2.3-rc.1.0.20261202003906-cb32f7be49d5+dirty", "coagent8: v1.2.3-rc.1.0.20261202003906-cb32f7be49d5+dirty\n"},
		{"0.1.0-dev", "coagent8: 0.1.0-dev\n"},
		{"", "coagent8: unknown\n"},
		{"v1.0.0-" + token, "coagent8: v1.0.[REDACTED:opaque]"},
		{token, "coagent8: [REDACTED:opaque]"},
	} {
		r := Build(Input{Versions: Versions{Coagent8: tc.version, Go: "go1.26.8"}})
		if !strings.Contains(r.Body, tc.want) {
			t.Errorf("version %q: body lacks %q:\n%s", tc.version, tc.want, r.Body)
		}
		if strings.Contains(r.Body, token) {
			t.Errorf("version %q: token leaked:\n%s", tc.version, r.Body)
		}
	}
}
