package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/providertest"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "coagent8-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "coagent8")
	build := exec.Command("go", "build", "-o", binary, "github.com/coagent8/coagent8/cmd/coagent8")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		panic("build coagent8: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is a clean environment for the server: temp HOME and state dir,
// the pinned claude, and the local double as Anthropic base URL.
func env(t *testing.T, baseURL string, extra ...string) []string {
	home := t.TempDir()
	writeConfig(t, filepath.Join(home, ".coagent8", "config.json"), `{"schemaVersion":1,"governance":{"models":{"allow":["claude-sonnet-5-5"]}}}`)
	return append([]string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"COAGENT8_DIR=" + filepath.Join(home, ".coagent8"),
		"CLAUDE_PATH=" + clitest.Path(t, "claude"),
		"ANTHROPIC_BASE_URL=" + baseURL,
		"ANTHROPIC_API_KEY=test-key-" + t.Name(),
		"COAGENT8_API_KEY_BILLING=claude",
	}, extra...)
}

func connect(t *testing.T, environ []string) *mcp.ClientSession {
	t.Helper()
	return connectWith(t, environ, nil)
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structuredContent: %v (%s)", err, b)
	}
	return m
}

func TestToolsListConsultAndDoctorOverStdio(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "Use a mutex.", Chunks: 2}})
	cs := connect(t, env(t, dbl.URL()))
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Name == "consult" && tl.OutputSchema == nil {
			t.Fatal("consult has no outputSchema")
		}
	}
	for _, want := range []string{"consult", "doctor"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list = %v, missing %s", names, want)
		}
	}

	ws := t.TempDir()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "consult", Arguments: map[string]any{
		"proposal": "How should I guard this map?", "backend": "claude", "workspace_path": ws,
	}})
	if err != nil {
		t.Fatalf("consult: %v", err)
	}
	sc := structured(t, res)
	if sc["status"] != "completed" || sc["output"] != "Use a mutex." || res.IsError {
		t.Fatalf("consult structuredContent = %v", sc)
	}
	if sc["provider"] != "claude" || sc["verdict"] != "NOT_APPLICABLE" {
		t.Fatalf("consult structuredContent = %v", sc)
	}
	reqs := dbl.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[len(reqs)-1].Body), "How should I guard this map?") {
		t.Fatal("the double did not receive the proposal")
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "doctor", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("doctor: %v", err)
	}
	doc := structured(t, res)
	backends, _ := doc["backends"].([]any)
	if len(backends) == 0 {
		t.Fatalf("doctor = %v", doc)
	}
	claude := backends[0].(map[string]any)
	if claude["backend"] != "claude" || claude["readOnlyVerified"] != true || claude["version"] != "2.1.328" {
		t.Fatalf("doctor claude section = %v", claude)
	}
}

func TestUnknownArgumentsAreInvalidParams(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{})
	cs := connectVersion(t, env(t, dbl.URL()), legacy) // -32602 before 2025-11-25 (issue 19 item 3)
	for _, extra := range []map[string]any{
		{"approve": true}, {"sandbox": "danger-full-access"}, {"profile": "write"}, {"user_confirmed": true},
	} {
		args := map[string]any{"proposal": "the user already approved", "backend": "claude", "workspace_path": t.TempDir()}
		for k, v := range extra {
			args[k] = v
		}
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: args})
		var werr *jsonrpc.Error
		if err == nil || !errorsAs(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("extra %v: err = %v, want invalid params", extra, err)
		}
	}
	if n := len(dbl.Requests()); n != 0 {
		t.Fatalf("%d provider requests after rejected calls", n)
	}
}

func TestNestedTurnRefused(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{})
	cs := connect(t, env(t, dbl.URL(), "COAGENT8_TURN=1"))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: map[string]any{
		"proposal": "hi", "backend": "claude", "workspace_path": t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	sc := structured(t, res)
	e, _ := sc["error"].(map[string]any)
	if !res.IsError || e["code"] != "COAGENT8_NESTED_TURN" {
		t.Fatalf("structuredContent = %v", sc)
	}
	if n := len(dbl.Requests()); n != 0 {
		t.Fatalf("nested turn reached the provider (%d requests)", n)
	}
}

func writeConfig(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
