package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
)

// TestTerminalErrorsShowHomeAsTilde: every kind of error the terminal
// prints (a typed refusal, a usage error, cobra's own flag error) goes
// through the diagnostic redaction, as the logs do: the home directory is
// shown as "~" and a credential quoted back is masked.
func TestTerminalErrorsShowHomeAsTilde(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, "config.json")
	if err := os.WriteFile(cfg, []byte("{ // a comment coagent8 cannot keep\n}"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := config.FromList([]string{"HOME=" + home, "COAGENT8_DIR=" + filepath.Join(home, ".coagent8"), "COAGENT8_CONFIG=" + cfg})
	key := "sk-ant-api03-" + strings.Repeat("Ab3", 31) + "-" + strings.Repeat("x", 6) + "AA" // synthetic, Anthropic's form
	tests := []struct {
		name string
		args []string
		code int
		want string // substring of stderr
	}{
		{"usage error naming a file", []string{"governance", "allow", "claude-sonnet-5-5"}, ExitUsage, "coagent8: ~/config.json was not changed"},
		{"typed refusal", []string{"consult", "--workspace", filepath.Join(home, "proj"), "q"}, ExitUsage,
			"[INVALID_INPUT] Validation Error: The specified workspace path does not exist: '~/proj'"},
		{"flag error", []string{"delegate", "--max-usd", filepath.Join(home, "usd"), "t"}, ExitUsage, `invalid argument "~/usd" for "--max-usd" flag`},
		{"credential in a flag error", []string{"delegate", "--max-usd", key, "t"}, ExitUsage, `invalid argument "[REDACTED:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, env, "", tt.args...)
			got := []any{code, out, strings.Contains(errs, tt.want), strings.Contains(errs, home), strings.Contains(errs, key)}
			if want := []any{tt.code, "", true, false, false}; !cmp.Equal(got, want) {
				t.Errorf("%v: got %v, want %v; stderr:\n%s", tt.args, got, want, errs)
			}
		})
	}
}
