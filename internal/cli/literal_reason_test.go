package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
)

// TestLiteralCredentialOneReason (newcomer report): a config.json holding
// a literal credential is reported with the configuration's own reason,
// config.literal_credential, by every command — gate grant said so while
// consult refused POLICY_DENIED config.governance_invalid and governance
// show named that reason too — each naming the key path and never the
// value; the log line of the configuration problem carries the reason.
func TestLiteralCredentialOneReason(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("A", 80) + "AA"
	ws := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"governance show", []string{"governance", "show"}, ExitFailure},
		{"consult", []string{"consult", "--backend", "claude", "--workspace", ws, "Is this safe?"}, ExitRefused},
		{"doctor", []string{"doctor"}, ExitOK},
		{"gate grant", []string{"gate", "grant", "--provider", "anthropic", "--model", "m", "--job", "j", "--price-input", "3",
			"--price-output", "15", "--max-tokens", "1000", "--max-requests", "1", "--max-usd", "1"}, ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := config.FromList([]string{"HOME=" + t.TempDir(), "PATH=/nonexistent-c8"})
			writeTestConfig(t, env.ConfigPath(), `{"schemaVersion":1,"gate":{"credentials":{"anthropic":"`+key+`"}}}`)
			code, out, errs := runCLI(t, env, "", tt.args...)
			all := out + errs
			reason := strings.Contains(errs, "(reason: config.literal_credential)")
			if tt.name == "doctor" {
				var rep struct {
					Sections struct {
						Governance struct{ Reason string } `json:"governance"`
					} `json:"sections"`
				}
				if err := json.Unmarshal([]byte(out), &rep); err != nil {
					t.Fatalf("%v: %s", err, out)
				}
				reason = rep.Sections.Governance.Reason == "config.literal_credential"
			}
			logged := true
			for _, line := range strings.Split(errs, "\n") {
				if strings.Contains(line, `msg="configuration problem"`) && !strings.Contains(line, "reason=config.literal_credential") {
					logged = false
				}
			}
			got := []any{code, reason, logged, strings.Contains(all, "gate.credentials.anthropic"),
				strings.Contains(all, "governance_invalid"), strings.Contains(all, strings.Repeat("A", 20))}
			if d := cmp.Diff([]any{tt.code, true, true, true, false, false}, got); d != "" {
				t.Errorf("exit, reason, logged with reason, names the key, says governance_invalid, quotes the value (-want +got):\n%s\nstdout: %s\nstderr: %s", d, out, errs)
			}
		})
	}
}
