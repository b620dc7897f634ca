package gate

import (
	"slices"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/providertest"
)

// addedHeaders are what a hostile agent adds to its CLI's requests: an
// exfiltration header with labelled content, a cookie and an unknown
// beta flag header.
var addedHeaders = [][2]string{{"x-exfil", privateMarker + " valuation 41.7M"}, {"cookie", "session=abc123"},
	{"x-unknown-beta", "feature-2099"}}

// checkOnlyAllowlisted asserts the double saw no header outside allowed.
func checkOnlyAllowlisted(t *testing.T, reqs []providertest.Request, allowed []string) {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatal("no request reached the double")
	}
	for _, r := range reqs {
		for name := range r.Header {
			if !slices.Contains(allowed, name) {
				t.Errorf("%s %s: header %s reached the double", r.Method, r.Path, name)
			}
		}
		for _, v := range r.Header {
			if strings.Contains(strings.Join(v, ""), privateMarker) {
				t.Errorf("labelled header content reached the double")
			}
		}
	}
}

// TestClaudeCodeAddedHeadersDropped: the real Claude Code CLI sends
// ANTHROPIC_CUSTOM_HEADERS with its own session and telemetry headers;
// only the allowlist reaches the double, and the egress decision record
// names the dropped headers (issue 18 scope 1).
func TestClaudeCodeAddedHeadersDropped(t *testing.T) {
	bin := pinnedCLI(t, "claude")
	f := newFixture(t, func(o *Options) { labelledDecider(t, o) })
	f.anth.Script(providertest.Reply{Text: "WIRE-ANSWER-1"})
	s := spec(Anthropic)
	_, phantom := f.grant(s)
	var custom []string
	for _, h := range addedHeaders {
		custom = append(custom, h[0]+": "+h[1])
	}
	env := []string{"HOME=" + t.TempDir(), "PATH=" + config.FromOS().Get("PATH"), "ANTHROPIC_BASE_URL=" + f.srv.URL,
		"ANTHROPIC_API_KEY=" + phantom, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"ANTHROPIC_CUSTOM_HEADERS=" + strings.Join(custom, "\n")}
	out := runCLI(t, bin, env, "-p", "--output-format", "stream-json", "--verbose", "--model", s.Model, "--tools", "")
	if !strings.Contains(out, "WIRE-ANSWER-1") {
		t.Fatalf("answer missing:\n%s", out)
	}
	checkOnlyAllowlisted(t, f.anth.Requests(), upstreamHeaders)
	checkDroppedRecorded(t, f, "cookie", "x-exfil", "x-unknown-beta")
}

// TestCodexAddedHeadersDropped: the same with Codex's provider
// http_headers.
func TestCodexAddedHeadersDropped(t *testing.T) {
	bin := pinnedCLI(t, "codex")
	f := newFixture(t, func(o *Options) { labelledDecider(t, o) })
	f.oai.Script(providertest.Reply{Text: "WIRE-ANSWER-2"})
	s := spec(OpenAI)
	_, phantom := f.grant(s)
	var table []string
	for _, h := range addedHeaders {
		table = append(table, h[0]+` = "`+h[1]+`"`)
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "CODEX_HOME=" + home, "PATH=" + config.FromOS().Get("PATH"), "GATE_PHANTOM=" + phantom}
	out := runCLI(t, bin, env, "exec", "--json", "--skip-git-repo-check", "-c", `web_search="disabled"`, // the gate refuses the hosted tool
		"-c", "model_provider=gate", "-c", `model_providers.gate.name="coagent8 gate"`,
		"-c", `model_providers.gate.base_url="`+f.srv.URL+`/v1"`,
		"-c", `model_providers.gate.env_key="GATE_PHANTOM"`, "-c", `model_providers.gate.wire_api="responses"`,
		"-c", "model_providers.gate.http_headers={ "+strings.Join(table, ", ")+" }",
		"-m", s.Model, "-")
	if !strings.Contains(out, "WIRE-ANSWER-2") {
		t.Fatalf("answer missing:\n%s", out)
	}
	allowed := append([]string{"Accept-Encoding", "Content-Length", "Authorization"}, openAIHeaders...)
	checkOnlyAllowlisted(t, f.oai.Requests(), allowed)
	checkDroppedRecorded(t, f, "cookie", "x-exfil", "x-unknown-beta")
}

// checkDroppedRecorded asserts an egress decision record lists names
// among the dropped headers.
func checkDroppedRecorded(t *testing.T, f *fixture, names ...string) {
	t.Helper()
	for _, e := range f.events.Events() {
		_, dropped, ok := strings.Cut(e.Detail, " dropped=")
		if !ok || !strings.HasPrefix(e.Rule, "egress.") {
			continue
		}
		dropped, _, _ = strings.Cut(dropped, " ") // the custody route follows
		list := strings.Split(dropped, ",")
		if !slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(list, n) }) {
			return
		}
	}
	t.Errorf("no egress decision record drops %v", names)
}
