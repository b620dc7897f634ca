package consent

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/providertest"
)

// serverEnv, when set, makes the test binary an MCP stdio server whose
// consult tool asks through a real Gate and writes what it saw (the
// refusal and two environment probes) to the file it names.
const serverEnv = "COAGENT8_CONSENT_TEST_SERVER"

func TestMain(m *testing.M) {
	if out := os.Getenv(serverEnv); out != "" {
		serveConsult(out)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// seen is what the re-executed server reports.
type seen struct {
	Reason, Message string
	Details         map[string]string
	Listed, Hidden  string // CLAUDE_PATH (named in env_vars) and an unlisted variable
}

func serveConsult(out string) {
	g, err := New(Options{Sink: &event.Memory{}})
	if err != nil {
		os.Exit(3)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "coagent8-test", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "consult", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, _, err := g.Check(ctx, req, askDecision(false))
			fe := fault.From(err)
			s := seen{Listed: os.Getenv("CLAUDE_PATH"), Hidden: os.Getenv("COAGENT8_UNLISTED_PROBE")}
			if fe != nil {
				s.Reason, s.Message, s.Details = fe.Reason, fe.Message, fe.Details
			}
			b, _ := json.Marshal(s)
			os.WriteFile(out, b, 0o600)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: s.Message}}}, nil
		})
	srv.Run(context.Background(), &mcp.StdioTransport{})
}

// TestCodexExecDeclineIsTheHosts runs the pinned `codex exec` as the MCP
// host of a real Gate: Codex declines the approval form by itself within
// milliseconds, and the refusal must say the host declined, never that
// the user did (issue 19 item 16). It also checks the docs/HOSTS.md facts
// the setup depends on: an MCP server gets a variable only when env_vars
// names it, and codex exec calls an MCP tool only when it is approved in
// the configuration.
func TestCodexExecDeclineIsTheHosts(t *testing.T) {
	codex := clitest.Path(t, "codex")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var got seen
	// Codex starts MCP servers concurrently with the first model request;
	// when the server loses that race the call is "unsupported" and is
	// retried with a fresh home.
	for attempt := 0; attempt < 6 && got.Reason == ""; attempt++ {
		got = runCodexHost(t, codex, self)
	}
	if got.Reason != ReasonDeclined || got.Details["answered_by"] != "host" {
		t.Fatalf("refusal %+v, want %s answered_by host", got, ReasonDeclined)
	}
	if !strings.Contains(got.Message, "the MCP host declined the approval request") || strings.Contains(got.Message, "user declined") {
		t.Errorf("message %q claims a user acted", got.Message)
	}
	if got.Listed != "/opt/probe/claude" || got.Hidden != "" {
		t.Errorf("server env: CLAUDE_PATH %q (listed in env_vars), unlisted %q; want the listed one only", got.Listed, got.Hidden)
	}
}

func runCodexHost(t *testing.T, codex, self string) seen {
	t.Helper()
	oai := providertest.NewOpenAITools(t, providertest.Options{Default: providertest.Reply{Text: "host done"}},
		providertest.FunctionCall{Name: "consult", Namespace: "mcp__coagent8", Arguments: map[string]any{}})
	home, out := t.TempDir(), filepath.Join(t.TempDir(), "seen.json")
	cfg := `model = "gpt-5.1"
model_provider = "double"
[model_providers.double]
name = "double"
base_url = "` + oai.URL() + `/v1"
env_key = "DOUBLE_KEY"
wire_api = "responses"
[mcp_servers.coagent8]
command = "` + self + `"
env = { ` + serverEnv + ` = "` + out + `" }
env_vars = ["CLAUDE_PATH"]
default_tools_approval_mode = "approve"
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, codex, "exec", "--json", "--skip-git-repo-check", "-")
	cmd.Env = []string{"HOME=" + home, "CODEX_HOME=" + home, "PATH=" + os.Getenv("PATH"), "DOUBLE_KEY=k",
		"CLAUDE_PATH=/opt/probe/claude", "COAGENT8_UNLISTED_PROBE=1"}
	cmd.Dir, cmd.Stdin = t.TempDir(), strings.NewReader("Ask coagent8.")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("codex exec: %v\n%s", err, b)
	}
	var s seen
	if b, err := os.ReadFile(out); err == nil {
		json.Unmarshal(b, &s)
	}
	return s
}
