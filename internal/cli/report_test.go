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
		{"usage error naming a file", []string{"governance", "allow", "claude-sonnet-5-5"}, ExitUsage, "coagent8: error [INVALID_INPUT] ~/config.json was not changed"},
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

// TestTerminalErrorsShowSymlinkedHomeAsTilde: with a home directory that
// is a symlink, an error naming the canonical path (the sandbox names it
// for a path that contains a symlink) shows the home as "~" too: the
// resolved home is the same directory.
func TestTerminalErrorsShowSymlinkedHomeAsTilde(t *testing.T) {
	real := filepath.Join(t.TempDir(), "real")
	if err := os.MkdirAll(filepath.Join(real, "bin"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "bin", "t"), []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(filepath.Dir(real), "home")
	if err := os.Symlink(real, home); err != nil {
		t.Fatal(err)
	}
	env := config.FromList([]string{"HOME=" + home, "COAGENT8_DIR=" + filepath.Join(home, ".coagent8"), "COAGENT8_CONFIG=" + filepath.Join(home, "config.json")})
	code, _, errs := runCLI(t, env, "", "sandbox", "run", "--", filepath.Join(home, "bin", "t"))
	got := []any{code, strings.Contains(errs, "the canonical path is ~/bin/t"), strings.Contains(errs, real)}
	if want := []any{ExitUsage, true, false}; !cmp.Equal(got, want) {
		t.Errorf("got %v, want %v; stderr:\n%s", got, want, errs)
	}
}
