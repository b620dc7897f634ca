package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/coagent8/coagent8/internal/fault"
)

// syntheticAnthropicKey is a credential-shaped canary built at run time.
func syntheticAnthropicKey() string { return "sk-ant-api03-" + strings.Repeat("L", 40) + "AA" }

// TestLiteralCredentialRefusesTheFile: a literal credential anywhere in
// config.json refuses the whole file, naming the key path with the value
// redacted (R-100; issue 18 scope 3); references load.
func TestLiteralCredentialRefusesTheFile(t *testing.T) {
	key := syntheticAnthropicKey()
	tests := []struct {
		name, body, wantKey string
	}{
		{"credential as the gate reference", `{"gate":{"credentials":{"anthropic":"` + key + `"}}}`, "gate.credentials.anthropic"},
		{"credential in a verify argument", `{"verify":{"commands":[["/bin/echo","x","` + key + `"]]}}`, "verify.commands[0][2]"},
		{"credential in an unknown key", `{"notes":{"deploy":"token ` + key + `"}}`, "notes.deploy"},
		{"github token in egress", `{"egress":{"labels":[{"name":"ghp_` + strings.Repeat("a", 36) + `"}]}}`, "egress.labels[0].name"},
		// A credential used as a key is found whatever its value, and the
		// path naming it is redacted too.
		{"credential as a key", `{"gate":{"credentials":{"` + key + `":"env:X"}}}`, "gate.credentials.[REDACTED:anthropic-key]"},
		{"credential as a key of a number", `{"notes":{"` + key + `":1}}`, "notes.[REDACTED:anthropic-key]"},
		{"credential as a key of an object", `{"notes":{"` + key + `":{}}}`, "notes.[REDACTED:anthropic-key]"},
		{"credential as a key of null", `{"notes":{"` + key + `":null}}`, "notes.[REDACTED:anthropic-key]"},
		// The file's tokens are read, not its decoded map: a duplicate
		// key does not hide the value it replaces (red team 2026-12-02).
		{"credential under a replaced duplicate", `{"notes":{"x":"` + key + `"},"notes":{}}`, "notes.x"},
		{"credential replaced in an object", `{"notes":{"x":"` + key + `","x":"fine"}}`, "notes.x"},
		{"credential JSON-escaped", `{"notes":["ok",{"y":"` + strings.Replace(key, "-", `\u002d`, 2) + `"}]}`, "notes[1].y"},
		{"credential deep in arrays", `{"verify":{"commands":[[],["a",["b","` + key + `"]]]}}`, "verify.commands[1][1][1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := LoadFile(writeConfig(t, tt.body))
			fe := fault.From(err)
			if fe == nil || fe.Reason != "config.literal_credential" || fe.Details["key"] != tt.wantKey {
				t.Fatalf("LoadFile error %v, want config.literal_credential naming %s", err, tt.wantKey)
			}
			if strings.Contains(err.Error(), strings.Repeat("L", 20)) || strings.Contains(err.Error(), strings.Repeat("a", 20)) {
				t.Errorf("error quotes the credential: %v", err)
			}
			if !strings.Contains(err.Error(), "REDACTED") {
				t.Errorf("error does not show the redacted value: %v", err)
			}
			if _, gerr := f.GateCredentials(); gerr == nil {
				t.Error("GateCredentials usable from a refused file")
			}
			// Turns are refused with the file's own reason and key, not
			// config.governance_invalid (newcomer report).
			ge := fault.From(f.GovernanceErr())
			if ge == nil || ge.Code != fault.PolicyDenied || ge.Reason != "config.literal_credential" || ge.Details["key"] != tt.wantKey ||
				!strings.Contains(ge.Message, "REDACTED") || strings.Contains(ge.Message, strings.Repeat("L", 20)) {
				t.Errorf("GovernanceErr() = %v, want POLICY_DENIED config.literal_credential naming %s, the value redacted", f.GovernanceErr(), tt.wantKey)
			}
		})
	}
}

// TestLiteralCredentialNamesItsFormat: the refusal names the format of
// the literal as its prefix says, a short or cut Anthropic key included
// ("sk-ant-api03" was labelled openai-key: the generic sk- pattern's
// fail-closed rule caught it after sk-ant-'s declined).
func TestLiteralCredentialNamesItsFormat(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{"anthropic key", syntheticAnthropicKey(), "[REDACTED:anthropic-key]"},
		{"anthropic prefix only", "sk-ant-api03", "[REDACTED:anthropic-key]"},
		{"anthropic key cut short", "sk-ant-api03-" + strings.Repeat("x", 5), "[REDACTED:anthropic-key]"},
		{"openai project key", "sk-proj-" + strings.Repeat("P", 40), "[REDACTED:openai-key]"},
		{"openai legacy key", "sk-" + strings.Repeat("a1", 24), "[REDACTED:openai-key]"},
		{"github token", "ghp_" + strings.Repeat("g", 36), "[REDACTED:github-token]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadFile(writeConfig(t, `{"gate":{"credentials":{"anthropic":"`+tt.value+`"}}}`))
			want := "configuration key gate.credentials.anthropic holds a literal credential (" + tt.want + ")"
			if fe := fault.From(err); fe == nil || !strings.Contains(fe.Message, want) {
				t.Errorf("LoadFile error %v, want it to say %q", err, want)
			}
		})
	}
}

// TestGateCredentials: gate.credentials maps providers to references;
// anything else is refused naming the key.
func TestGateCredentials(t *testing.T) {
	tests := []struct {
		name, body string
		want       map[string]string
		wantKey    string
	}{
		{"absent", `{}`, nil, ""},
		{"both providers", `{"gate":{"credentials":{"anthropic":"env:ANTHROPIC_API_KEY","openai":"file:/run/keys/openai"}}}`,
			map[string]string{"anthropic": "env:ANTHROPIC_API_KEY", "openai": "file:/run/keys/openai"}, ""},
		{"unknown provider", `{"gate":{"credentials":{"gemini":"env:G"}}}`, nil, "gate.credentials.gemini"},
		{"not a reference", `{"gate":{"credentials":{"anthropic":"hunter2"}}}`, nil, "gate.credentials.anthropic"},
		{"unknown gate key", `{"gate":{"upstreams":{}}}`, nil, "gate.upstreams"},
		{"not an object", `{"gate":"env:X"}`, nil, "gate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := LoadFile(writeConfig(t, tt.body))
			got, err := f.GateCredentials()
			var ke *KeyError
			switch {
			case tt.wantKey == "" && err != nil:
				t.Fatalf("GateCredentials: %v", err)
			case tt.wantKey != "" && (!errors.As(err, &ke) || ke.Key != tt.wantKey):
				t.Fatalf("GateCredentials error %v, want one naming %s", err, tt.wantKey)
			}
			if tt.wantKey == "" && len(tt.want) > 0 {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("credentials (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestGateIntermediaries: gate.intermediaries maps providers to the
// forward proxy their requests go through (issue 18 scope 5); an unknown
// provider or a non-string refuses naming the key, and the gate section
// is then unusable as a whole.
func TestGateIntermediaries(t *testing.T) {
	tests := []struct {
		name, body string
		want       map[string]string
		wantKey    string
	}{
		{"absent", `{"gate":{"credentials":{"anthropic":"env:A"}}}`, map[string]string{}, ""},
		{"one provider", `{"gate":{"intermediaries":{"anthropic":"https://relay.example:3128"}}}`,
			map[string]string{"anthropic": "https://relay.example:3128"}, ""},
		{"unknown provider", `{"gate":{"intermediaries":{"gemini":"https://relay.example"}}}`, nil, "gate.intermediaries.gemini"},
		{"not a string", `{"gate":{"intermediaries":{"openai":3128}}}`, nil, "gate.intermediaries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := LoadFile(writeConfig(t, tt.body))
			got, err := f.GateIntermediaries()
			var ke *KeyError
			switch {
			case tt.wantKey == "" && err != nil:
				t.Fatalf("GateIntermediaries: %v", err)
			case tt.wantKey != "" && (!errors.As(err, &ke) || ke.Key != tt.wantKey):
				t.Fatalf("GateIntermediaries error %v, want one naming %s", err, tt.wantKey)
			case tt.wantKey != "":
				if _, cerr := f.GateCredentials(); cerr == nil {
					t.Error("GateCredentials usable from a refused gate section")
				}
				return
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("intermediaries (-want +got):\n%s", diff)
			}
		})
	}
}
