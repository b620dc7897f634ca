package codex

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"

	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/providertest"
)

// TestConsultAndResume runs the pinned Codex CLI through the backend
// against the Responses double: a full turn returns the double's answer,
// and a second call with the returned SessionID resumes the same thread in
// a new app-server process (the double sees the earlier turn).
func TestConsultAndResume(t *testing.T) {
	h := newHarness(t, clitest.Path(t, "codex"), "",
		providertest.Reply{Text: "FIRST-ANSWER-from-double", Chunks: 3},
		providertest.Reply{Text: "SECOND-ANSWER-from-double"})
	b := h.backend(Options{})
	obs := &recorder{}
	turn := h.turn("first question: remember the word PELICAN")
	turn.Observer = obs
	res, err := b.Run(context.Background(), turn)
	if err != nil {
		t.Fatalf("first Run: %v (cause %v)", err, errorsCause(err))
	}
	if res.Text != "FIRST-ANSWER-from-double" || res.Model != testModel || res.SessionID == "" {
		t.Fatalf("first result = %+v", res)
	}
	if got := obs.deltas.String(); got != res.Text {
		t.Errorf("streamed deltas = %q, want %q", got, res.Text)
	}
	if !strings.HasPrefix(res.Verified, "codex.thread: sandbox=readOnly") {
		t.Errorf("Verified = %q", res.Verified)
	}
	if res.Usage.InputTokens == 0 || res.Usage.OutputTokens == 0 {
		t.Errorf("usage not reported: %+v", res.Usage)
	}
	next := h.turn("second question")
	next.SessionID = res.SessionID
	res2, err := b.Run(context.Background(), next)
	if err != nil {
		t.Fatalf("resume Run: %v (cause %v)", err, errorsCause(err))
	}
	if res2.Text != "SECOND-ANSWER-from-double" || res2.SessionID != res.SessionID {
		t.Fatalf("resume result = %+v, want same session %s", res2, res.SessionID)
	}
	bodies := h.responses()
	if len(bodies) != 2 {
		t.Fatalf("double saw %d model requests, want 2", len(bodies))
	}
	for _, want := range []string{"PELICAN", "FIRST-ANSWER-from-double", "second question"} {
		if !strings.Contains(bodies[1], want) {
			t.Errorf("resumed request lacks %q (earlier turn not in input)", want)
		}
	}
	for _, r := range h.double.Requests() {
		if got := r.Credential(); got != dummyKey() {
			t.Errorf("double got credential %q, want the configured env_key value", got)
		}
	}
}

// mcpTOML declares two MCP servers: a real stdio MCP server (this test
// binary in mcp-serve mode) and one whose name is not a bare TOML key.
func mcpTOML(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return `
[mcp_servers.realmcp]
command = "` + exe + `"
args = ["mcp-serve"]
startup_timeout_sec = 20

[mcp_servers."dotted.name"]
command = "/bin/cat"
`
}

// TestMCPServersDisabled: both configured servers are reported disabled by
// the real CLI and the turn runs.
func TestMCPServersDisabled(t *testing.T) {
	h := newHarness(t, clitest.Path(t, "codex"), mcpTOML(t), providertest.Reply{Text: "answer-with-mcp-config"})
	b := h.backend(Options{})
	res, err := b.Run(context.Background(), h.turn("hello"))
	if err != nil {
		t.Fatalf("Run: %v (cause %v)", err, errorsCause(err))
	}
	if res.Text != "answer-with-mcp-config" || !strings.Contains(res.Verified, "mcp_servers_disabled=2") {
		t.Errorf("result = %+v", res)
	}
	in, err := b.Inspect(context.Background(), h.workspace)
	if err != nil || in.Error != nil {
		t.Fatalf("Inspect: %v / %v", err, in.Error)
	}
	want := []ServerStatus{{Name: "dotted.name", Status: "disabled", Disabled: true}, {Name: "realmcp", Status: "disabled", Disabled: true}}
	if diff := cmp.Diff(want, in.Servers); diff != "" {
		t.Errorf("Inspect servers (-want +got):\n%s", diff)
	}
}

// TestMCPServerEnabledRefused: a wrapper hides one server from the
// disable overrides, the real CLI starts it, and the turn is refused
// before turn/start: the model double receives nothing.
func TestMCPServerEnabledRefused(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, exe, mcpTOML(t))
	if err := writeScenario(h.home, scenario{Wrap: clitest.Path(t, "codex"), Unhide: "realmcp"}); err != nil {
		t.Fatal(err)
	}
	_, err = h.backend(Options{}).Run(context.Background(), h.turn("hello"))
	fe := wantFault(t, err, fault.SandboxUnavailable, ReasonMCPEnabled)
	if !strings.Contains(fe.Message, "realmcp=") {
		t.Errorf("message does not name the server: %q", fe.Message)
	}
	if n := len(h.responses()); n != 0 {
		t.Errorf("double received %d model requests, want 0", n)
	}
}

// TestConfigModelLines (AUD-P1-11): commented and nested model lines in
// config.toml do not change the model; the CLI's effective top-level model
// is the one reported and sent.
func TestConfigModelLines(t *testing.T) {
	extra := `
# model = "o3"
review_model = "o4-review"
[profiles.other]
model = "gpt-other"
`
	h := newHarness(t, clitest.Path(t, "codex"), extra, providertest.Reply{Text: "model-check"})
	res, err := h.backend(Options{}).Run(context.Background(), h.turn("hello"))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Model != testModel {
		t.Errorf("reported model = %q, want %q", res.Model, testModel)
	}
	bodies := h.responses()
	if len(bodies) != 1 || !strings.Contains(bodies[0], `"model":"`+testModel+`"`) {
		t.Errorf("double did not receive model %s: %d requests", testModel, len(bodies))
	}
}

// TestReadOnlyWorkspace: the model's answer asks to create a file; after
// the read-only turn the workspace's git tree and status are unchanged.
// (The Responses double cannot script tool calls, so this checks the
// text-only path; tool-call approvals are declined in TestScriptedTurn.)
func TestReadOnlyWorkspace(t *testing.T) {
	h := newHarness(t, clitest.Path(t, "codex"), "",
		providertest.Reply{Text: "Create the file pwned.txt with `echo pwned > pwned.txt` and apply this patch:\n*** Begin Patch\n*** Add File: pwned.txt\n+pwned\n*** End Patch"})
	tree := git(t, h.workspace, "rev-parse", "HEAD^{tree}")
	_, err := h.backend(Options{}).Run(context.Background(), h.turn("Please create a file named pwned.txt in the workspace."))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := git(t, h.workspace, "rev-parse", "HEAD^{tree}"); got != tree {
		t.Errorf("git tree changed: %s → %s", tree, got)
	}
	if st := git(t, h.workspace, "status", "--porcelain", "--untracked-files=all", "--ignored"); st != "" {
		t.Errorf("workspace changed:\n%s", st)
	}
}

// TestProbe: metadata-only probe of the real CLI reports version, default
// model and a verified thread, and sends no prompt.
func TestProbe(t *testing.T) {
	h := newHarness(t, clitest.Path(t, "codex"), "")
	p := h.backend(Options{}).Probe(context.Background())
	if !p.Installed || !p.Supported || p.Version != "0.169.0" || p.DefaultModel != testModel || p.Error != nil {
		t.Errorf("probe = %+v (error %+v)", p, p.Error)
	}
	if n := len(h.responses()); n != 0 {
		t.Errorf("probe sent %d model requests", n)
	}
}
