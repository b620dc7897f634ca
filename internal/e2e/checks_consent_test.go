package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestReviewChecksWaitForConsent: the user's checks (verify.commands) are
// part of the review the user is asked about. While the approval form is
// open, and after the user declines it, no check has run in the task
// sandbox: a review of a model the user has not approved (or denies)
// starts nothing, however often the calling agent asks.
func TestReviewChecksWaitForConsent(t *testing.T) {
	ws, sha := goRepo(t)
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: envelope(sha, "READY", ""), Chunks: 1}})
	environ := env(t, dbl.URL())
	home := homeOf(environ)
	writeConfig(t, filepath.Join(home, ".coagent8", "config.json"),
		`{"schemaVersion":1,"governance":{"models":{"ask":["claude-sonnet-5-5"]}},"verify":{"commands":[["`+goBin()+`","version"]],"timeoutSeconds":300}}`)
	asked := 0
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			// A person reading the form: long enough for a check to
			// start and end in the sandbox had it been started.
			select {
			case <-time.After(4 * time.Second):
			case <-ctx.Done():
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	cmd := exec.Command(binary)
	cmd.Env = environ
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "review", Arguments: map[string]any{"backend": "claude", "workspace_path": ws}})
	if err != nil {
		t.Fatal(err)
	}
	sc := structured(t, res)
	e, _ := sc["error"].(map[string]any)
	if asked != 1 || e["code"] != "POLICY_DENIED" || e["reason"] != "consent.declined" || sc["checks"] != nil {
		t.Fatalf("asked %d, error %v, checks %v", asked, e, sc["checks"])
	}
	if n := modelRequests(dbl); n != 0 {
		t.Errorf("%d model requests", n)
	}
	b, _ := os.ReadFile(filepath.Join(home, ".coagent8", "events.jsonl"))
	if strings.Contains(string(b), "sandbox.run") {
		t.Errorf("a check ran in the sandbox before (and without) the user's approval:\n%s", b)
	}
}
