package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
)

// TestGovernanceRuleRefusesUneditableFile (issue 19 item 3): a config.json
// coagent8 cannot rewrite faithfully (comments, duplicate keys, trailing
// data, a list that is not strings) is refused as a usage error
// (INVALID_INPUT config.not_editable) naming the file and the hand edit,
// and the file is byte-identical afterwards. The file is in HOME, so the
// terminal names it ~/config.json (TestTerminalErrorsShowHomeAsTilde).
func TestGovernanceRuleRefusesUneditableFile(t *testing.T) {
	tests := []struct{ name, body string }{
		{"line comment", "{\n  // mine\n  \"governance\": {\"models\": {\"allow\": [\"m-a\"]}}\n}\n"},
		{"block comment", "{ /* x */ \"schemaVersion\": 1 }"},
		{"duplicate key", `{"governance":{},"governance":{"models":{}}}`},
		{"trailing data", `{"schemaVersion":1} {}`},
		{"allow not strings", `{"governance":{"models":{"deny":[1]}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "config.json")
			if err := os.WriteFile(path, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			env := config.FromList([]string{"HOME=" + dir, "COAGENT8_DIR=" + dir, "COAGENT8_CONFIG=" + path})
			code, out, errs := runCLI(t, env, "", "governance", "allow", "claude-sonnet-5-5")
			if code != ExitUsage || out != "" || !strings.Contains(errs, "~/config.json was not changed") ||
				!strings.Contains(errs, "governance.models.allow in the file by hand") || strings.Contains(errs, "PROCESS_ERROR") {
				t.Errorf("exit %d, stdout %q, stderr %q; want a usage error naming ~/config.json and the hand edit", code, out, errs)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.body {
				t.Errorf("file changed:\n%s\nwant\n%s", b, tt.body)
			}
		})
	}
}
