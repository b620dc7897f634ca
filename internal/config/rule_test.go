package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestSetModelRule: the rule asked for is the only one the id keeps; the
// rest of the file (unknown keys, order, number spelling) survives.
func TestSetModelRule(t *testing.T) {
	const base = `{"zeta":{"n":[1,2.50]},"governance":{"askAbovePrice":20.00,"models":{"deny":["o3"],"allow":["gpt-5"]}},"alpha":null}`
	tests := []struct {
		name, before, list, id string
		want                   string // governance.models after, compact JSON
		changed                bool
	}{
		{"allow a new id", base, "allow", "claude-sonnet-5-5", `{"deny":["o3"],"allow":["gpt-5","claude-sonnet-5-5"]}`, true},
		{"deny moves it off allow", base, "deny", "GPT-5", `{"deny":["o3","GPT-5"],"allow":[]}`, true},
		{"ask creates the list", base, "ask", "o3", `{"deny":[],"allow":["gpt-5"],"ask":["o3"]}`, true},
		{"already allowed is untouched", base, "allow", "Gpt-5", `{"deny":["o3"],"allow":["gpt-5"]}`, false},
		{"empty file gets governance", `{}`, "allow", "m", `{"allow":["m"]}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeConfig(t, tt.before)
			if runtime.GOOS != "windows" {
				if err := os.Chmod(p, 0o640); err != nil {
					t.Fatal(err)
				}
			}
			changed, err := SetModelRule(p, tt.list, tt.id)
			if err != nil {
				t.Fatalf("SetModelRule: %v", err)
			}
			after, _ := os.ReadFile(p)
			top, err := decodeObject(after)
			if err != nil {
				t.Fatalf("result is not an object: %v\n%s", err, after)
			}
			gov, _ := top.object("governance")
			models, _ := gov.object("models")
			var keys []string
			for _, m := range top {
				keys = append(keys, m.key)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, models.encode()); err != nil {
				t.Fatal(err)
			}
			got := []any{changed, compact.String()}
			want := []any{tt.changed, tt.want}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("SetModelRule (-want +got):\n%s\nfile:\n%s", d, after)
			}
			if tt.before == base && (!strings.Contains(string(after), "2.50") || !strings.Contains(string(after), "20.00") ||
				!cmp.Equal(keys, []string{"zeta", "governance", "alpha"})) {
				t.Errorf("the rest of the file changed:\n%s", after)
			}
			if fi, _ := os.Stat(p); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o640 {
				t.Errorf("mode = %v, want 0640", fi.Mode().Perm())
			}
			if f, err := LoadFile(p); err != nil || f.GovernanceErr() != nil {
				t.Errorf("edited file does not load: %v / %v", err, f.GovernanceErr())
			}
		})
	}
}

func TestSetModelRuleRefuses(t *testing.T) {
	tests := []struct {
		name, before, list, id, wantReason, wantKey string
	}{
		{"unknown list", `{}`, "permit", "m", "governance.list_invalid", ""},
		{"invalid id", `{}`, "allow", "--yolo", "model.invalid", ""},
		{"allow is not a list", `{"governance":{"models":{"allow":"gpt-5"}}}`, "deny", "m", "", "governance.models.allow"},
		{"not an object", `[1]`, "allow", "m", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeConfig(t, tt.before)
			_, err := SetModelRule(p, tt.list, tt.id)
			if err == nil {
				t.Fatal("no error")
			}
			var fe *fault.Error
			var ke *KeyError
			switch {
			case tt.wantReason != "" && (!errors.As(err, &fe) || fe.Code != fault.InvalidInput || fe.Reason != tt.wantReason):
				t.Errorf("err = %v, want INVALID_INPUT %s", err, tt.wantReason)
			case tt.wantKey != "" && (!errors.As(err, &ke) || ke.Key != tt.wantKey):
				t.Errorf("err = %v, want key %s", err, tt.wantKey)
			}
			if after, _ := os.ReadFile(p); string(after) != tt.before {
				t.Errorf("file edited despite the error: %s", after)
			}
		})
	}
}

// TestLoadExplicitMissing: a COAGENT8_CONFIG naming no file refuses turns
// naming the path (home as ~); the default path missing is the defaults.
func TestLoadExplicitMissing(t *testing.T) {
	home := t.TempDir()
	missing := filepath.Join(home, "typo", "config.json")
	tests := []struct {
		name       string
		env        []string
		wantReason string
	}{
		{"named and missing", []string{"HOME=" + home, "COAGENT8_CONFIG=" + missing}, "config.missing"},
		{"default and missing", []string{"HOME=" + home}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := FromList(tt.env).Load()
			reason := ""
			var fe *fault.Error
			if errors.As(f.GovernanceErr(), &fe) {
				reason = fe.Reason
				if fe.Code != fault.PolicyDenied || !strings.Contains(fe.Message, filepath.Join("~", "typo", "config.json")) ||
					strings.Contains(fe.Message, home) || err == nil {
					t.Errorf("refusal = %v (load error %v), want POLICY_DENIED naming ~/typo/config.json", fe, err)
				}
			}
			if reason != tt.wantReason {
				t.Errorf("reason = %q, want %q", reason, tt.wantReason)
			}
		})
	}
}

// TestMalformedCauseShown: the refusal of an unparsable file says what is
// wrong and where (issue 19 item 13), naming the file with the home
// directory as ~ through Env.Load, and never with its absolute path.
func TestMalformedCauseShown(t *testing.T) {
	home := t.TempDir()
	p := filepath.Join(home, "config.json")
	if err := os.WriteFile(p, []byte(`{"governance": {"models": }`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := FromList([]string{"HOME=" + home, "COAGENT8_CONFIG=" + p})
	for name, load := range map[string]func() (File, error){"Env.Load": env.Load, "LoadFile": func() (File, error) { return LoadFile(p) }} {
		f, _ := load()
		var fe *fault.Error
		if !errors.As(f.GovernanceErr(), &fe) || fe.Reason != ReasonInvalidJSON {
			t.Fatalf("%s: GovernanceErr = %v, want %s", name, f.GovernanceErr(), ReasonInvalidJSON)
		}
		want := "config.json is not valid JSON: line 1, column 27: invalid character '}'"
		if name == "Env.Load" {
			want = filepath.Join("~", want)
		}
		if !strings.Contains(fe.Message, want) || strings.Contains(fe.Message, home) {
			t.Errorf("%s: message = %q, want it to contain %q and not %s", name, fe.Message, want, home)
		}
	}
}

// TestDefaultBackendErr (issue 19 item 11): a defaultBackend that is not a
// backend is kept as an INVALID_INPUT naming the known ones.
func TestDefaultBackendErr(t *testing.T) {
	tests := []struct {
		body, want string
	}{
		{`{"defaultBackend":"nope"}`, `defaultBackend "nope" in the coagent8 configuration is not a known backend: use claude, codex or agy (or gemini, agy's old name), or remove it`},
		{`{"defaultBackend":7}`, `defaultBackend 7 in the coagent8 configuration is not a known backend: use claude, codex or agy (or gemini, agy's old name), or remove it`},
		{`{"defaultBackend":"codex"}`, ""},
		{`{"defaultBackend":null}`, ""},
	}
	for _, tt := range tests {
		f, _ := LoadFile(writeConfig(t, tt.body))
		got := ""
		var fe *fault.Error
		if errors.As(f.DefaultBackendErr(), &fe) {
			got = fe.Message
			if fe.Code != fault.InvalidInput || fe.Reason != "config.default_backend_invalid" {
				t.Errorf("%s: %v", tt.body, fe)
			}
		}
		if got != tt.want {
			t.Errorf("%s: message %q, want %q", tt.body, got, tt.want)
		}
	}
}
