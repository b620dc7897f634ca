package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
)

func runGate(t *testing.T, env config.Env, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := MainEnv(context.Background(), append([]string{"gate"}, args...), Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env)
	return code, out.String(), errb.String()
}

func TestGateGrantInspectRevokeSettle(t *testing.T) {
	env := config.FromList([]string{"COAGENT8_DIR=" + t.TempDir(), "HOME=" + t.TempDir()})
	code, out, errs := runGate(t, env, "grant", "--provider", "anthropic", "--model", "claude-sonnet-4-5",
		"--job", "j1", "--secret", "env:REAL_KEY", "--max-requests", "3", "--max-tokens", "100000",
		"--max-usd", "1.5", "--price-input", "3", "--price-output", "15")
	if code != ExitOK {
		t.Fatalf("grant: exit %d: %s", code, errs)
	}
	var g struct {
		ID, Phantom, State string
		Limits             struct{ Requests int64 }
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil || !strings.HasPrefix(g.Phantom, "c8g_") || g.Limits.Requests != 3 {
		t.Fatalf("grant output %q: %v", out, err)
	}
	code, out, _ = runGate(t, env, "inspect", g.ID)
	if code != ExitOK || strings.Contains(out, g.Phantom) || !strings.Contains(out, `"state": "live"`) {
		t.Errorf("inspect: %d %s", code, out)
	}
	if code, out, _ = runGate(t, env, "revoke", g.ID); code != ExitOK || !strings.Contains(out, `"state": "revoked"`) {
		t.Errorf("revoke: %d %s", code, out)
	}
	if code, _, errs = runGate(t, env, "inspect", "g_missing"); code != ExitUsage || !strings.Contains(errs, "no grant") {
		t.Errorf("inspect missing: %d %s", code, errs)
	}
}

func TestGateGrantRefusesLiteralKey(t *testing.T) {
	env := config.FromList([]string{"COAGENT8_DIR=" + t.TempDir()})
	key := "sk-ant-" + strings.Repeat("K", 30)
	code, _, errs := runGate(t, env, "grant", "--provider", "anthropic", "--model", "m", "--job", "j",
		"--secret", key, "--max-requests", "1", "--max-tokens", "1", "--max-usd", "1", "--price-input", "1")
	if code != ExitUsage || strings.Contains(errs, "KKKK") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestGateServeRefusesNonLoopback(t *testing.T) {
	env := config.FromList([]string{"COAGENT8_DIR=" + t.TempDir()})
	code, _, errs := runGate(t, env, "serve", "--listen", "0.0.0.0:0")
	if code != ExitRefused || !strings.Contains(errs, "gate.listen") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
