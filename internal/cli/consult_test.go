package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConsultFlagErrors: the consult flags accept what the MCP tool's
// schema accepts; a bad flag is a usage error naming the flag and the
// accepted values, reported before the workspace and the backend are
// looked at (so one error comes at a time, in that order).
func TestConsultFlagErrors(t *testing.T) {
	ws := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"session mode", []string{"--session-mode", "sometimes"}, `--session-mode "sometimes": use new, auto or none`},
		{"task type", []string{"--task-type", "poetry"}, `--task-type "poetry": use architecture, debug or implementation, or omit it`},
		{"effort", []string{"--effort", "huge"}, `--effort "huge": use none, minimal, low, medium, high, xhigh or max`},
		{"timeout short", []string{"--timeout", "10ms"}, "--timeout 10ms: use 100ms to 30m, or 0 for the default (15m)"},
		{"timeout long", []string{"--timeout", "31m"}, "--timeout 31m0s: use 100ms to 30m"},
		{"timeout negative", []string{"--timeout", "-1s"}, "--timeout -1s: use 100ms to 30m"},
		{"file absolute", []string{"--file", "/etc/passwd"}, `--file "/etc/passwd": give the path relative to the workspace, not an absolute path`},
		{"file traversal", []string{"--file", "../x"}, `--file "../x": give the path inside the workspace without '..'`},
		{"file inner traversal", []string{"--file", "a/../../x"}, `--file "a/../../x": give the path inside the workspace without '..'`},
		{"file dotdot inside", []string{"--file", "a/../b"}, `--file "a/../b": give the path inside the workspace without '..'`},
		{"flag before workspace", []string{"--session-mode", "x", "--workspace", "/nonexistent-c8"}, `--session-mode "x"`},
		{"flag before backend", []string{"--effort", "x", "--backend", "nope"}, `--effort "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"consult", "--workspace", ws}, tt.args...), "question")
			code, out, errs := runCLI(t, testEnv(t), "", args...)
			if code != ExitUsage || out != "" || !strings.HasPrefix(errs, "coagent8: error [INVALID_INPUT] "+tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errs, ExitUsage, tt.want)
			}
		})
	}
}

// TestConsultCheckOrder: after the flags, the workspace is checked before
// the backend; an unknown backend lists every accepted value, auto too.
func TestConsultCheckOrder(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"workspace before backend", []string{"--workspace", "/nonexistent-c8", "--backend", "nope"},
			"does not exist: '/nonexistent-c8' (reason: workspace.not_found)"},
		{"unknown backend", []string{"--workspace", ws, "--backend", "nope"},
			`unknown backend "nope"; use auto, claude, codex or agy`},
		{"relative workspace from the current directory", []string{"--workspace", ".", "--backend", "nope"},
			`unknown backend "nope"`},
		{"workspace not a directory", []string{"--workspace", file, "--backend", "nope"}, "workspace.not_directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, testEnv(t), "", append(append([]string{"consult"}, tt.args...), "question")...)
			if code != ExitUsage || out != "" || !strings.Contains(errs, tt.want) || strings.Count(errs, "coagent8: ") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and one error containing %q", code, out, errs, ExitUsage, tt.want)
			}
		})
	}
}

// TestConsultValidFlags: the values the MCP tool accepts pass.
func TestConsultValidFlags(t *testing.T) {
	for _, o := range []consultOptions{
		{mode: "none"}, {mode: "new"}, {mode: "auto"},
		{mode: "none", taskType: "architecture", effort: "xhigh", timeout: 100 * time.Millisecond},
		{mode: "none", taskType: "debug", effort: "none", timeout: 30 * time.Minute},
		{mode: "none", taskType: "implementation", files: []string{"main.go", "internal/cli/cli.go", "./a.go", "dir/"}},
	} {
		if err := o.validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// TestConsultFlagBeforeQuestion: a bad flag is reported before stdin is
// read or the question is checked.
func TestConsultFlagBeforeQuestion(t *testing.T) {
	code, _, errs := runCLI(t, testEnv(t), "   ", "consult", "--effort", "x", "-")
	if code != ExitUsage || !strings.HasPrefix(errs, `coagent8: error [INVALID_INPUT] --effort "x"`) {
		t.Errorf("exit %d, stderr %q; want the --effort error", code, errs)
	}
	code, _, errs = runCLI(t, testEnv(t), "   ", "consult", "-")
	if code != ExitUsage || !strings.HasPrefix(errs, "coagent8: error [INVALID_INPUT] the question is empty") {
		t.Errorf("exit %d, stderr %q; want the empty question", code, errs)
	}
}

// TestConsultNoBackendNamesPathsSearched: with no backend CLI installed
// and none named, consult's CLI_NOT_FOUND backend.none_installed lists
// the paths searched for each backend (README: "with the paths
// searched"), as a named backend's refusal does.
func TestConsultNoBackendNamesPathsSearched(t *testing.T) {
	bin := t.TempDir()
	code, out, errs := runCLI(t, testEnv(t, "PATH="+bin), "", "consult", "--workspace", t.TempDir(), "question")
	if code == ExitOK || out != "" || !strings.Contains(errs, "CLI_NOT_FOUND") || !strings.Contains(errs, "backend.none_installed") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want CLI_NOT_FOUND backend.none_installed", code, out, errs)
	}
	for _, b := range []string{"claude", "codex", "agy"} {
		if want := b + ": " + filepath.Join(bin, b); !strings.Contains(errs, want) {
			t.Errorf("stderr %q does not name %q", errs, want)
		}
	}
}
