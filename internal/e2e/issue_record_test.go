package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestIssueReportIsRecordedLocally: the issue tool admits the report's
// exact canonical bytes under the closed-diagnostic-recording purpose and
// writes them to the state directory; nothing is sent (issue 10 §5).
func TestIssueReportIsRecordedLocally(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{})
	environ := env(t, dbl.URL())
	home := homeOf(environ)
	cs := connect(t, environ)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "issue", Arguments: map[string]any{
		"error_message": "review returned PROTOCOL_ERROR", "include_doctor": false}})
	if err != nil {
		t.Fatal(err)
	}
	sc := structured(t, res)
	at, _ := sc["recordedAt"].(string)
	if !strings.HasPrefix(at, "~/.coagent8/diagnostics/diagnostic-") {
		t.Fatalf("recordedAt = %q (result %v)", at, sc)
	}
	got, err := os.ReadFile(filepath.Join(home, strings.TrimPrefix(at, "~/")))
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(got, &rec); err != nil || rec["title"] != sc["title"] || rec["body"] != sc["body"] {
		t.Fatalf("record %s does not hold the report", got)
	}
	if len(dbl.Requests()) != 0 {
		t.Fatal("the issue tool reached the provider")
	}
}
