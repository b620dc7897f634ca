package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/providertest"
)

const codexModel = "gpt-5.4"

// codexEnv prepares a CODEX_HOME whose custom model provider is the local
// Responses double, and a governance config that allows the model.
func codexEnv(t *testing.T, dbl *providertest.OpenAI) []string {
	home := t.TempDir()
	toml := `model = "` + codexModel + `"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "` + dbl.URL() + `/v1"
env_key = "COAGENT8_E2E_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, filepath.Join(home, ".coagent8", "config.json"), `{"governance":{"models":{"allow":["`+codexModel+`"]}}}`)
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home, "CODEX_HOME=" + home,
		"COAGENT8_DIR=" + filepath.Join(home, ".coagent8"),
		"CODEX_PATH=" + clitest.Path(t, "codex"),
		"COAGENT8_E2E_KEY=dummy-" + strings.ReplaceAll(t.Name(), "/", "-"),
	}
}

func TestCodexConsultAndContinuationOverMCP(t *testing.T) {
	dbl := providertest.NewOpenAI(t, providertest.Options{Replies: []providertest.Reply{{Text: "PELICAN-ONE"}, {Text: "second answer"}}})
	cs := connect(t, codexEnv(t, dbl))
	ws := t.TempDir()
	call := func(args map[string]any) map[string]any {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return structured(t, res)
	}
	first := call(map[string]any{"proposal": "remember the word", "backend": "codex", "workspace_path": ws, "session_mode": "new"})
	if first["status"] != "completed" || first["output"] != "PELICAN-ONE" || first["provider"] != "codex" {
		t.Fatalf("first = %v", first)
	}
	handle, _ := first["sessionHandle"].(string)
	if handle == "" || first["continuationAvailable"] != true {
		t.Fatalf("no continuation: %v", first)
	}
	second := call(map[string]any{"proposal": "what was the word?", "backend": "codex", "workspace_path": ws, "session_handle": handle})
	if second["status"] != "completed" || second["output"] != "second answer" {
		t.Fatalf("second = %v", second)
	}
	var last string
	for _, r := range dbl.Requests() {
		if strings.HasSuffix(r.Path, "/responses") {
			last = string(r.Body)
		}
	}
	if !strings.Contains(last, "PELICAN-ONE") || !strings.Contains(last, "remember the word") {
		t.Fatalf("the second request does not carry turn one: %.400s", last)
	}
}
