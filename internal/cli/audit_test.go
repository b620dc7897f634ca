package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
)

// TestAuditShowsOnlyDigests: after a gate grant (which records an event
// with grant and job ids), `audit` lists the event with its identifiers
// as EvidenceDigest@1 and never the raw ids.
func TestAuditShowsOnlyDigests(t *testing.T) {
	env := config.FromList([]string{"COAGENT8_DIR=" + t.TempDir(), "HOME=" + t.TempDir()})
	code, _, errs := runGate(t, env, "grant", "--provider", "anthropic", "--model", "claude-sonnet-4-5",
		"--job", "job-audit-canary", "--secret", "env:REAL_KEY", "--max-requests", "3", "--max-tokens", "100000",
		"--max-usd", "1.5", "--price-input", "3", "--price-output", "15")
	if code != ExitOK {
		t.Fatalf("grant: %d %s", code, errs)
	}
	var out, errb bytes.Buffer
	code = MainEnv(context.Background(), []string{"audit"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env)
	if code != ExitOK {
		t.Fatalf("audit: exit %d: %s", code, errb.String())
	}
	got := out.String()
	if strings.Contains(got, "job-audit-canary") {
		t.Errorf("raw job id exported:\n%s", got)
	}
	if !strings.Contains(got, `"kind":"event"`) || !strings.Contains(got, `"job":"ed1:e1:`) {
		t.Errorf("no digested event:\n%s", got)
	}
}
