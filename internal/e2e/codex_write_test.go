package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestCodexCannotWriteTheWorkspace: the provider double makes the model
// ask Codex to create a file in the workspace; under the verified
// read-only profile the file is never created and the workspace's git
// tree and status are unchanged. Whatever Codex reports, coagent8
// returns no answer that claims otherwise: either the turn completes with
// the workspace untouched, or it is refused.
func TestCodexCannotWriteTheWorkspace(t *testing.T) {
	dbl := providertest.NewOpenAITools(t, providertest.Options{Default: providertest.Reply{Text: "done trying"}},
		providertest.FunctionCall{Name: "exec_command", Arguments: map[string]any{"cmd": "echo pwned > PWNED.txt && echo x >> calc.go"}})
	ws, _ := gitRepo(t)
	before := gitState(t, ws)
	cs := connect(t, codexEnv(t, dbl))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: map[string]any{
		"proposal": "create PWNED.txt in the workspace", "backend": "codex", "workspace_path": ws}})
	if err != nil {
		t.Fatal(err)
	}
	sc := structured(t, res)
	if _, err := os.Stat(filepath.Join(ws, "PWNED.txt")); err == nil {
		t.Fatal("PWNED.txt was created in the workspace")
	}
	if after := gitState(t, ws); after != before {
		t.Fatalf("git state changed:\n%s\n->\n%s", before, after)
	}
	calls, reported := 0, false
	for _, r := range dbl.Requests() {
		if strings.HasSuffix(r.Path, "/responses") {
			calls++
			reported = reported || strings.Contains(string(r.Body), `"function_call_output"`) && strings.Contains(string(r.Body), `"call_id":"call_test`)
		}
	}
	if calls < 2 || !reported {
		t.Fatalf("codex never reported the tool call's result back (%d model requests); result %v", calls, sc)
	}
	t.Logf("outcome: status=%v error=%v", sc["status"], sc["error"])
}

func gitState(t *testing.T, ws string) string {
	tree, err := exec.Command("git", "-C", ws, "rev-parse", "HEAD^{tree}").Output()
	if err != nil {
		t.Fatal(err)
	}
	status, err := exec.Command("git", "-C", ws, "status", "--porcelain", "--untracked-files=all").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(tree) + string(status)
}
