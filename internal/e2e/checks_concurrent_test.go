package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestReviewChecksNeverLoseBackend is issue 14's regression test: review
// with checks, many times and concurrently with other sandbox work in the
// same server (its first-use qualification, another review's checks, the
// stale-job sweep of a planted dead job root) and in another process
// (`sandbox qualify`), never loses its backend. The cause was the
// parent-death signal, which belongs to the forking thread: the sandbox
// ends the thread its PID 1 was started from, and a Claude Code forked
// earlier from that thread got SIGKILL (internal/process/process.go spawn).
func TestReviewChecksNeverLoseBackend(t *testing.T) {
	ws, sha := goRepo(t)
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: envelope(sha, "READY", ""), Chunks: 3}})
	environ := checksEnv(t, dbl.URL(), `{"commands":[["/usr/bin/true"]],"timeoutSeconds":60}`)
	cs := connect(t, environ)
	plantStaleJobRoot(t)

	// The first review resolves the model (a metadata probe with its own
	// short deadline) and qualifies the sandbox in the server while another
	// process qualifies too; then rounds of parallel reviews, whose checks
	// start and end sandboxes while the other reviews' backends run.
	qualify := func(errs chan<- error) {
		cmd := exec.Command(binary, "sandbox", "qualify")
		cmd.Env = environ
		if out, err := cmd.CombinedOutput(); err != nil {
			errs <- fmt.Errorf("concurrent sandbox qualify: %v\n%s", err, out)
		}
	}
	const rounds, parallel = 4, 3
	errs := make(chan error, rounds*parallel+4)
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	run(func() { qualify(errs) })
	run(func() {
		if err := reviewWithPassingCheck(cs, ws); err != nil {
			errs <- fmt.Errorf("first review: %w", err)
		}
	})
	wg.Wait()
	for r := range rounds {
		if r == 1 {
			run(func() { qualify(errs) })
		}
		for i := range parallel {
			run(func() {
				if err := reviewWithPassingCheck(cs, ws); err != nil {
					errs <- fmt.Errorf("round %d review %d: %w", r, i, err)
				}
			})
		}
		wg.Wait()
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// reviewWithPassingCheck runs one review and wants READY with the one
// configured check passed.
func reviewWithPassingCheck(cs *mcp.ClientSession, ws string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "review", Arguments: map[string]any{
		"backend": "claude", "workspace_path": ws}})
	if err != nil {
		return err
	}
	sc, _ := res.StructuredContent.(map[string]any)
	if sc == nil {
		return fmt.Errorf("no structured content: %+v", res.Content)
	}
	checks, _ := sc["checks"].([]any)
	if res.IsError || sc["verdict"] != "READY" || len(checks) != 1 {
		return fmt.Errorf("verdict %v, error %v, checks %v, warnings %v", sc["verdict"], sc["error"], sc["checks"], sc["warnings"])
	}
	if c, _ := checks[0].(map[string]any); c["status"] != "passed" {
		return fmt.Errorf("check %v", c)
	}
	return nil
}

// plantStaleJobRoot leaves a job root as a supervisor that died would: an
// unlocked directory older than the sweep's minimum age.
func plantStaleJobRoot(t *testing.T) {
	t.Helper()
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	dir := filepath.Join(fmt.Sprintf("/tmp/coagent8-jobs-%d", os.Geteuid()), hex.EncodeToString(id))
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("the stale job root %s was not swept", dir)
			os.RemoveAll(dir)
		}
	})
}
