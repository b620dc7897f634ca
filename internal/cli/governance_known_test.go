package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/price"
)

// TestKnownModels: an id is known from the price list (exactly, as the CLI
// names it, dated, or with an effort suffix), from the snapshot's unpriced
// current models, or from the user's rules; the nearest known id is
// suggested only when it is close enough to be a misspelling.
func TestKnownModels(t *testing.T) {
	k := knownModels{catalogs: []*price.Catalog{price.Embedded()}, ids: append(price.UnpricedIDs(), "my-own-model")}
	tests := []struct {
		id      string
		known   bool
		closest string // asked only of an unknown id
	}{
		{"claude-sonnet-5-5", true, ""},
		{"CLAUDE-SONNET-5-5", true, ""},
		{"anthropic/claude-sonnet-4.5", true, ""},
		{"claude-sonnet-4-5-20250929", true, ""},
		{"gpt-5.2-high", true, ""},
		{"gpt-6.1-sol", true, ""},
		{"claude-opus-4-8", true, ""}, // unpriced
		{"my-own-model", true, ""},    // in the user's rules
		{"claude-sonet-4", false, "claude-sonnet-4"},
		{"gpt-6.1-sool", false, "gpt-6.1-sol"},
		{"gemini-2.5-flsh", false, "gemini-2.5-flash"},
		{"sonnet", false, ""},
		{"totally-unknown", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got := []any{k.knows(tt.id), ""}
			if !tt.known {
				got[1] = k.closest(tt.id)
			}
			if d := cmp.Diff([]any{tt.known, tt.closest}, got); d != "" {
				t.Errorf("knows, closest (-want +got):\n%s", d)
			}
		})
	}
}

// TestGovernanceUnknownModel: allow, ask and deny refuse an id coagent8
// does not know, as a usage error naming the nearest known id, and write
// nothing; --unlisted takes it; an id already in the user's rules is
// known.
func TestGovernanceUnknownModel(t *testing.T) {
	const refused = "coagent8: error [INVALID_INPUT] unknown model "
	tests := []struct {
		name   string
		rules  string // the config file before; "" = none
		args   []string
		code   int
		stderr string // prefix
		listed bool   // whether the model is in the file afterwards
	}{
		{"typo on allow", "", []string{"allow", "claude-sonet-4"}, ExitUsage,
			refused + `"claude-sonet-4" (did you mean "claude-sonnet-4"?): coagent8 knows`, false},
		{"typo on deny", "", []string{"deny", "gpt-6.1-sool"}, ExitUsage, refused + `"gpt-6.1-sool" (did you mean "gpt-6.1-sol"?)`, false},
		{"nothing near", "", []string{"ask", "totally-unknown"}, ExitUsage, refused + `"totally-unknown": coagent8 knows`, false},
		// Another version is another model: no suggestion of it.
		{"other version", "", []string{"allow", "claude-opus-4-0"}, ExitUsage, refused + `"claude-opus-4-0": coagent8 knows`, false},
		{"unlisted", "", []string{"allow", "totally-unknown", "--unlisted"}, ExitOK, "", true},
		{"known", "", []string{"deny", "claude-sonnet-5-5"}, ExitOK, "", true},
		{"unpriced current model", "", []string{"allow", "gpt-5.6-luna"}, ExitOK, "", true},
		{"already in the rules", `{"governance":{"models":{"ask":["totally-unknown"]}}}`, []string{"allow", "totally-unknown"}, ExitOK, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			env := config.FromList([]string{"HOME=" + home})
			if tt.rules != "" {
				writeTestConfig(t, env.ConfigPath(), tt.rules)
			}
			code, _, errs := runCLI(t, env, "", append([]string{"governance"}, tt.args...)...)
			b, _ := os.ReadFile(env.ConfigPath())
			got := []any{code, strings.HasPrefix(errs, tt.stderr), (errs == "") == (tt.stderr == ""), strings.Contains(string(b), tt.args[1])}
			if d := cmp.Diff([]any{tt.code, true, true, tt.listed}, got); d != "" {
				t.Errorf("governance %v (-want +got):\n%s\nstderr: %s\nfile: %s", tt.args, d, errs, b)
			}
			if code == ExitUsage && (!strings.Contains(errs, "(reason: governance.unknown_model)") || !strings.Contains(errs, "--unlisted")) {
				t.Errorf("stderr %q lacks the reason or the --unlisted hint", errs)
			}
		})
	}
}

// TestUnknownModelDetails: the refusal carries the model and the
// suggestion as details, for a caller reading the fault.
func TestUnknownModelDetails(t *testing.T) {
	fe := unknownModel("claude-sonet-4", knownModels{catalogs: []*price.Catalog{price.Embedded()}})
	got := []any{fe.Code, fe.Reason, fe.Details}
	want := []any{fault.InvalidInput, ReasonUnknownModel, map[string]string{"model": "claude-sonet-4", "suggestion": "claude-sonnet-4"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("unknownModel (-want +got):\n%s", d)
	}
}

func writeTestConfig(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestGovernanceAllowRunID (newcomer report): an allow rule matches only
// the exact id the backend CLI runs, so allow refuses another spelling of
// a model — the price list's author prefix and version dots, a routing
// variant — as a usage error (INVALID_INPUT governance.model_spelling)
// naming the id to allow, and writes nothing. deny and ask cover other
// spellings and take them.
func TestGovernanceAllowRunID(t *testing.T) {
	tests := []struct {
		args []string
		run  string // "" = accepted
	}{
		{[]string{"allow", "openai/gpt-6.1-sol"}, "gpt-6.1-sol"},
		{[]string{"allow", "claude-sonnet-5.5"}, "claude-sonnet-5-5"},
		{[]string{"allow", "anthropic/claude-sonnet-5.5"}, "claude-sonnet-5-5"},
		{[]string{"allow", "gpt-6-1-sol"}, "gpt-6.1-sol"},
		{[]string{"allow", "gpt-6.1-sol:nitro"}, "gpt-6.1-sol"},
		{[]string{"allow", "anthropic/claude-sonnet-4.5-high"}, "claude-sonnet-4-5-high"},
		{[]string{"allow", "openai/gpt-5.6-luna"}, "gpt-5.6-luna"}, // unpriced
		{[]string{"allow", "openai/gpt-7-new", "--unlisted"}, "gpt-7-new"},
		{[]string{"allow", "claude-sonnet-5-5"}, ""},
		{[]string{"allow", "gpt-6.1-sol-high"}, ""},
		{[]string{"allow", "claude-sonnet-4-5-20250929"}, ""},
		{[]string{"deny", "anthropic/claude-sonnet-5.5"}, ""},
		{[]string{"ask", "claude-sonnet-5.5"}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			env := config.FromList([]string{"HOME=" + t.TempDir()})
			code, _, errs := runCLI(t, env, "", append([]string{"governance"}, tt.args...)...)
			_, statErr := os.Stat(env.ConfigPath())
			got := []any{code, statErr == nil}
			want := []any{ExitOK, true}
			if tt.run != "" {
				want = []any{ExitUsage, false}
				cmd := "coagent8 governance allow " + tt.run
				if slices.Contains(tt.args, "--unlisted") {
					cmd += " --unlisted"
				}
				for _, s := range []string{`did you mean "` + tt.run + `"?`, "`" + cmd + "`", "(reason: governance.model_spelling)"} {
					if !strings.Contains(errs, s) {
						t.Errorf("stderr lacks %q: %s", s, errs)
					}
				}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("exit, file written (-want +got):\n%s\nstderr: %s", d, errs)
			}
		})
	}
}

// TestGovernanceShowFlagsAllowSpelling: an allow rule written before
// allow refused other spellings (or by hand) is flagged by show, naming
// the id to allow; a rule in the CLI's spelling is not.
func TestGovernanceShowFlagsAllowSpelling(t *testing.T) {
	env := config.FromList([]string{"HOME=" + t.TempDir()})
	writeTestConfig(t, env.ConfigPath(), `{"governance":{"models":{"allow":["anthropic/claude-sonnet-5.5","gpt-6.1-sol","openai/gpt-7"]}}}`)
	code, out, _ := runCLI(t, env, "", "governance", "show")
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Warning: ") {
			got = append(got, line)
		}
	}
	want := []string{
		"Warning: the allow rule anthropic/claude-sonnet-5.5 never applies: the backend runs claude-sonnet-5-5 (`coagent8 governance allow claude-sonnet-5-5`)",
		"Warning: the allow rule openai/gpt-7 never applies: the backend runs gpt-7 (`coagent8 governance allow gpt-7 --unlisted`)",
	}
	if d := cmp.Diff(want, got); code != ExitOK || d != "" {
		t.Errorf("exit %d, warnings (-want +got):\n%s\n%s", code, d, out)
	}
}
