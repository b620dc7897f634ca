package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/providertest"
)

// TestGovernanceRules (issue 19 item 9): each command leaves the model on
// exactly one list, keeps the rest of the file (unknown keys, order) and
// its mode, and says what it did.
func TestGovernanceRules(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	before := `{"zeta":{"x":[1,2.50]},"schemaVersion":1,"governance":{"askAbovePrice":12.5}}`
	if err := os.WriteFile(path, []byte(before), 0o640); err != nil {
		t.Fatal(err)
	}
	env := config.FromList([]string{"HOME=" + dir, "COAGENT8_DIR=" + dir, "COAGENT8_CONFIG=" + path})
	shown := filepath.Join("~", "config.json") // path as the terminal shows it: under the home directory
	steps := []struct {
		args             []string
		out              string
		allow, ask, deny []string
	}{
		{[]string{"allow", "claude-sonnet-5-5"}, shown + ": governance.models.allow now lists claude-sonnet-5-5: it runs without asking.\n",
			[]string{"claude-sonnet-5-5"}, nil, nil},
		{[]string{"allow", "claude-sonnet-5-5"}, shown + ": governance.models.allow already lists claude-sonnet-5-5: it runs without asking.\n",
			[]string{"claude-sonnet-5-5"}, nil, nil},
		{[]string{"ask", "claude-sonnet-5-5"}, shown + ": governance.models.ask now lists claude-sonnet-5-5: it is asked about on every turn, whatever it costs.\n",
			[]string{}, []string{"claude-sonnet-5-5"}, nil},
		{[]string{"deny", "gpt-6-astra"}, shown + ": governance.models.deny now lists gpt-6-astra: it never runs (POLICY_DENIED).\n",
			[]string{}, []string{"claude-sonnet-5-5"}, []string{"gpt-6-astra"}},
	}
	for _, s := range steps {
		code, out, errs := runCLI(t, env, "", append([]string{"governance"}, s.args...)...)
		f, err := config.LoadFile(path)
		if err != nil {
			t.Fatalf("%v: the edited file does not load: %v", s.args, err)
		}
		allow, ask, deny := f.Governance.Lists()
		got := []any{code, out, errs, orNil(allow), orNil(ask), orNil(deny)}
		want := []any{ExitOK, s.out, "", orNil(s.allow), orNil(s.ask), orNil(s.deny)}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("governance %v (-want +got):\n%s", s.args, d)
		}
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"zeta"`) || !strings.Contains(string(b), "2.50") || !strings.Contains(string(b), "12.5") ||
		strings.Index(string(b), `"zeta"`) > strings.Index(string(b), `"governance"`) {
		t.Errorf("the rest of the file was not kept:\n%s", b)
	}
	if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	code, out, _ := runCLI(t, env, "", "governance", "show")
	for _, want := range []string{"Configuration: " + shown + " (exists)", "deny  gpt-6-astra", "ask   claude-sonnet-5-5",
		"allow (none)", "askAbovePrice 12.50", "Price source: embedded", "Edit: coagent8 governance allow|ask|deny MODEL"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("show (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
}

func orNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// TestGovernanceUsage: bad arguments are usage errors that name the
// problem, and nothing is written.
func TestGovernanceUsage(t *testing.T) {
	tests := []struct {
		args       []string
		want, hint string
	}{
		{[]string{"governance", "allow"}, "missing MODEL", "coagent8 governance allow"},
		{[]string{"governance", "deny", "a", "b"}, "too many arguments: want MODEL, got 2", "coagent8 governance deny"},
		{[]string{"governance", "ask", "bad;id"}, `model id "bad;id" is not valid`, "coagent8 governance ask"},
		{[]string{"governance", "permit", "m"}, `unknown command "permit" for "coagent8 governance"`, "coagent8 governance"},
		{[]string{"governance", "show", "x"}, `governance show takes no arguments (got "x")`, "coagent8 governance show"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			env := testEnv(t)
			code, out, errs := runCLI(t, env, "", tt.args...)
			want := "coagent8: error [INVALID_INPUT] " + tt.want
			if code != ExitUsage || out != "" || !strings.HasPrefix(errs, want) || !strings.Contains(errs, "Run '"+tt.hint+" --help'") {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errs, want)
			}
			if _, err := os.Stat(env.ConfigPath()); err == nil {
				t.Error("a refused command wrote the configuration")
			}
		})
	}
}

// TestGovernanceShowExplicitMissing (item 13): show says a named file is
// missing and that turns are refused, and exits 1.
func TestGovernanceShowExplicitMissing(t *testing.T) {
	dir := t.TempDir()
	env := config.FromList([]string{"HOME=" + dir, "COAGENT8_DIR=" + dir, "COAGENT8_CONFIG=" + filepath.Join(dir, "typo.json")})
	code, out, errs := runCLI(t, env, "", "governance", "show")
	if code != ExitFailure || !strings.Contains(out, "(does not exist (named by COAGENT8_CONFIG))") ||
		!strings.Contains(out, "Governance: INVALID, turns are refused: COAGENT8_CONFIG names ~/typo.json") ||
		errs != "coagent8: the configuration refuses turns (reason: config.missing)\n" {
		t.Errorf("exit %d, stderr %q:\n%s", code, errs, out)
	}
}

// TestGovernanceShowStatus: show prints its report whatever the file
// holds, and exits 1, naming the reason on stderr, when the configuration
// refuses turns; a file that is not JSON has its own reason, with the
// parser's line and column.
func TestGovernanceShowStatus(t *testing.T) {
	shown := filepath.Join("~", ".coagent8", "config.json")
	tests := []struct {
		name, body string // body "" = no file
		code       int
		stderr     string
		inOut      string
	}{
		{"no file", "", ExitOK, "", "  allow (none)"},
		{"usable", `{"governance":{"models":{"allow":["m-1"]}}}`, ExitOK, "", "  allow m-1"},
		{"not JSON", "hello", ExitFailure, "coagent8: the configuration refuses turns (reason: config.invalid_json)\n",
			"Governance: INVALID, turns are refused until the configuration is fixed: " + shown +
				" is not valid JSON: line 1, column 1: invalid character 'h'"},
		{"truncated", `{"governance":`, ExitFailure, "coagent8: the configuration refuses turns (reason: config.invalid_json)\n",
			shown + " is not valid JSON: line 1, column 15: unexpected EOF"},
		{"bad governance", `{"governance":{"askAbovePrice":-1}}`, ExitFailure,
			"coagent8: the configuration refuses turns (reason: config.governance_invalid)\n", "governance.askAbovePrice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			env := config.FromList([]string{"HOME=" + home})
			if tt.body != "" {
				if err := os.MkdirAll(filepath.Dir(env.ConfigPath()), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(env.ConfigPath(), []byte(tt.body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errs := runCLI(t, env, "", "governance", "show")
			got := []any{code, errs, strings.Contains(out, tt.inOut), strings.Contains(out, "Edit: coagent8 governance")}
			if d := cmp.Diff([]any{tt.code, tt.stderr, true, true}, got); d != "" {
				t.Errorf("show (-want +got):\n%s\nstdout:\n%s", d, out)
			}
		})
	}
}

// TestFreshInstallTerminalConsult (item 9) with the pinned Claude Code
// against a local provider double: a fresh install's terminal consult is
// refused with the exact command to run; after `governance allow` it runs.
func TestFreshInstallTerminalConsult(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "fresh answer"}})
	home := t.TempDir()
	env := config.FromList([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "COAGENT8_DIR=" + filepath.Join(home, ".coagent8"),
		"CLAUDE_PATH=" + clitest.Path(t, "claude"), "ANTHROPIC_BASE_URL=" + dbl.URL(),
		"ANTHROPIC_API_KEY=synthetic-" + t.Name(), "COAGENT8_API_KEY_BILLING=claude"})
	ws := t.TempDir()
	code, out, errs := runCLI(t, env, "", "consult", "--backend", "claude", "--workspace", ws, "Is this safe?")
	if code == ExitOK || !strings.Contains(errs, "POLICY_DENIED") ||
		!strings.Contains(errs, "run `coagent8 governance allow claude-sonnet-5-5` in a terminal") ||
		!strings.Contains(errs, "a terminal command cannot ask for it") || strings.Contains(errs, "MCP client") {
		t.Fatalf("fresh consult: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, env, "", "governance", "allow", "claude-sonnet-5-5"); code != ExitOK {
		t.Fatalf("governance allow: exit %d, %s", code, errs)
	}
	code, out, errs = runCLI(t, env, "", "consult", "--backend", "claude", "--workspace", ws, "Is this safe?")
	if code != ExitOK || !strings.Contains(out, "fresh answer") {
		t.Errorf("consult after allow: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestGovernanceHelpNamesTheConfigLookup: `governance --help` states the
// lookup config.Env.ConfigPath makes (it said $COAGENT8_CONFIG else
// ~/.coagent8/config.json, leaving out $COAGENT8_DIR), and each step is
// the one stated.
func TestGovernanceHelpNamesTheConfigLookup(t *testing.T) {
	code, out, _ := runCLI(t, testEnv(t), "", "governance", "--help")
	const lookup = "($COAGENT8_CONFIG if set, else $COAGENT8_DIR/config.json, else\n~/.coagent8/config.json)"
	if code != ExitOK || !strings.Contains(out, lookup) {
		t.Errorf("governance --help: exit %d, lacks %q:\n%s", code, lookup, out)
	}
	for _, tt := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h", "COAGENT8_DIR=/d", "COAGENT8_CONFIG=/c/conf.json"}, "/c/conf.json"},
		{[]string{"HOME=/h", "COAGENT8_DIR=/d"}, "/d/config.json"},
		{[]string{"HOME=/h"}, "/h/.coagent8/config.json"},
	} {
		if got := config.FromList(tt.env).ConfigPath(); got != tt.want {
			t.Errorf("%v: ConfigPath = %q, want %q", tt.env, got, tt.want)
		}
	}
}
