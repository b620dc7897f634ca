package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/redact/redacttest"
)

// syncBuffer collects the server's stderr (the diagnostic log).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// TestCanaryThroughEveryPath plants one synthetic token of every format in
// a model answer, in issue-report input and in a failing turn, then
// searches everything coagent8 returned, streamed, logged and stored (MCP
// results, progress notifications, session history, doctor, issue report,
// stderr, every file in the state directory) for any 6-byte run of any of
// them (R-047–R-055, issue 4 §3).
func TestCanaryThroughEveryPath(t *testing.T) {
	answerCanaries := redacttest.Canaries()
	all := redacttest.All()
	var answer []string
	for _, c := range answerCanaries {
		answer = append(answer, "see "+c.Text+" here.")
	}
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: strings.Join(answer, "\n"), Chunks: 40}})
	environ := env(t, dbl.URL())
	stateDir := filepath.Join(homeOf(environ), ".coagent8")

	var captured bytes.Buffer
	keep := func(v any) {
		b, _ := json.Marshal(v)
		captured.Write(b)
		captured.WriteByte('\n')
	}
	stderr := &syncBuffer{}
	cmd := exec.Command(binary)
	cmd.Env = environ
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "canary", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { keep(req.Params) },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	call := func(name string, args map[string]any, progress bool) *mcp.CallToolResult {
		p := &mcp.CallToolParams{Name: name, Arguments: args}
		if progress {
			p.Meta = mcp.Meta{"progressToken": "canary-1"}
		}
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		keep(res)
		return res
	}

	res := call("consult", map[string]any{"proposal": "list the tokens", "backend": "claude", "workspace_path": ws, "session_mode": "new"}, true)
	sc := structured(t, res)
	if sc["status"] != "completed" || !strings.Contains(sc["output"].(string), "[REDACTED:") {
		t.Fatalf("consult = %v", sc)
	}
	handle, _ := sc["sessionHandle"].(string)
	call("session", map[string]any{"action": "history", "workspace_path": ws, "session_handle": handle}, false)
	call("session", map[string]any{"action": "result", "workspace_path": ws, "session_handle": handle}, false)
	call("doctor", map[string]any{}, false)
	var planted []string
	for _, c := range all {
		planted = append(planted, c.Text)
	}
	call("issue", map[string]any{"error_message": strings.Join(planted, " "), "context": strings.Join(planted, "\n")}, false)
	// A failing turn: the workspace does not exist, and its name carries
	// tokens (errors echo the path).
	call("consult", map[string]any{"proposal": "x", "backend": "claude", "workspace_path": "/nonexistent/" + answerCanaries[0].Text}, false)
	cs.Close()
	cmd.Wait()

	redacttest.AssertNoLeak(t, captured.Bytes(), all)
	redacttest.AssertNoLeak(t, stderr.Bytes(), all)
	var files int
	filepath.WalkDir(stateDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("read %s: %v", p, err)
			return nil
		}
		files++
		if leaks := redacttest.Leaks(b, all); len(leaks) > 0 {
			t.Errorf("state file %s leaks %v", filepath.Base(p), leaks)
		}
		return nil
	})
	if files < 2 {
		t.Fatalf("only %d state files were searched", files)
	}
}
