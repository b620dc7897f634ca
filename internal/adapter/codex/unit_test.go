package codex

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
)

func TestAppServerArgs(t *testing.T) {
	got := appServerArgs([]string{"alpha", "dotted.name", "we-ird_1"})
	want := []string{"app-server", "-c", `sandbox_mode="read-only"`, "-c", `approval_policy="never"`}
	for _, f := range DisabledFeatures {
		want = append(want, "-c", "features."+f+"=false")
	}
	want = append(want, "-c", "mcp_servers.alpha.enabled=false", "-c", "mcp_servers.we-ird_1.enabled=false")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	if slices.Contains(got, "exec") {
		t.Error("argv uses exec")
	}
	cfg := threadConfig([]string{"dotted.name"})
	if m := cfg["mcp_servers"].(map[string]any); m["dotted.name"] == nil {
		t.Errorf("thread config misses the dotted server: %v", cfg)
	}
}

func TestVerifyThread(t *testing.T) {
	ok := threadResult{ApprovalPolicy: json.RawMessage(`"never"`), Sandbox: &sandboxPolicy{Type: "readOnly", NetworkAccess: json.RawMessage(`false`)}, Cwd: "/w"}
	ok.Thread.ID = "id"
	if err := verifyThread(ok, "/w"); err != nil {
		t.Fatalf("good report refused: %v", err)
	}
	mutate := map[string]func(*threadResult){
		"other cwd":   func(r *threadResult) { r.Cwd = "/elsewhere" },
		"no id":       func(r *threadResult) { r.Thread.ID = "" },
		"no approval": func(r *threadResult) { r.ApprovalPolicy = nil },
		"never as obj": func(r *threadResult) {
			r.ApprovalPolicy = json.RawMessage(`{"never":true}`)
		},
		"external": func(r *threadResult) {
			r.Sandbox = &sandboxPolicy{Type: "externalSandbox", NetworkAccess: json.RawMessage(`"restricted"`)}
		},
	}
	for name, m := range mutate {
		r := ok
		s := *ok.Sandbox
		r.Sandbox = &s
		m(&r)
		if err := verifyThread(r, "/w"); !fault.HasCode(err, fault.SandboxUnavailable) {
			t.Errorf("%s: err = %v, want SANDBOX_UNAVAILABLE", name, err)
		}
	}
}

func TestVerifyMCP(t *testing.T) {
	tests := []struct {
		reported   map[string]string
		configured []string
		ok         bool
	}{
		{map[string]string{}, nil, true},
		{map[string]string{"a": "disabled", "b": "disabled"}, []string{"a", "b"}, true},
		{map[string]string{"a": "disabled"}, []string{"a", "b"}, false},
		{map[string]string{"a": "connected"}, []string{"a"}, false},
		{map[string]string{"a": ""}, []string{"a"}, false},
		{map[string]string{"a": "disabled", "x": "failed"}, []string{"a"}, false},
		{map[string]string{"a": "disabled", "x": "disabled"}, []string{"a"}, true},
	}
	for _, tt := range tests {
		err := verifyMCP(tt.reported, tt.configured)
		if got := err == nil; got != tt.ok {
			t.Errorf("verifyMCP(%v, %v) = %v, want ok=%v", tt.reported, tt.configured, err, tt.ok)
		}
	}
}

func TestVersion(t *testing.T) {
	tests := []struct {
		ua, v string
		ok    bool
	}{
		{"coagent8/0.169.0 (Debian 12.0.0; x86_64) unknown (coagent8; 0)", "0.169.0", true},
		{"coagent8/0.170.1-alpha (x)", "0.170.1-alpha", true},
		{"coagent8/1.0.0", "1.0.0", true},
		{"coagent8/0.168.9 (x)", "0.168.9", false},
		{"coagent8/0.169 (x)", "0.169", false},
		{"nothing", "", false},
	}
	for _, tt := range tests {
		v := versionFromUserAgent(tt.ua)
		if v != tt.v || (checkVersion(v) == nil) != tt.ok {
			t.Errorf("%q: version %q ok=%v, want %q ok=%v", tt.ua, v, checkVersion(v) == nil, tt.v, tt.ok)
		}
	}
}

func TestParseUserConfig(t *testing.T) {
	env := config.FromList([]string{"HOME=/h"})
	body := `
# model = "o3"
# [mcp_servers.commented]
model_provider = "p"
[model_providers.p]
env_key = "MY_KEY"
[mcp_servers.a]
command = "x"
[mcp_servers."b.c"]
url = "http://127.0.0.1:1"
[profiles.z.mcp_servers_not]
x = 1
`
	got, err := parseUserConfig(env, "/h/.codex/config.toml", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := userConfig{Path: "/h/.codex/config.toml", Servers: []string{"a", "b.c"}, EnvKey: "MY_KEY"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, err = parseUserConfig(env, "/h/.codex/config.toml", []byte("a = 1\nb = = 2\n"))
	var fe *fault.Error
	if !fault.HasCode(err, fault.SandboxUnavailable) {
		t.Fatalf("malformed: err = %v", err)
	}
	fe = fault.From(err)
	if !strings.Contains(fe.Message, "~/.codex/config.toml") || !strings.Contains(fe.Message, "line 2") {
		t.Errorf("message = %q", fe.Message)
	}
}

// FuzzParseUserConfig: the parser never panics and never yields a server
// name that the TOML did not contain as a key.
func FuzzParseUserConfig(f *testing.F) {
	f.Add("[mcp_servers.a]\ncommand='x'\n")
	f.Add("model_provider='p'\n[model_providers.p]\nenv_key='K'\n")
	f.Add("[mcp_servers.\"a.b\"]\n")
	env := config.FromList([]string{"HOME=/h"})
	f.Fuzz(func(t *testing.T, s string) {
		uc, err := parseUserConfig(env, "/h/c.toml", []byte(s))
		if err != nil {
			return
		}
		for _, n := range uc.Servers {
			if !strings.Contains(s, n) && !strings.ContainsAny(s, `\`) {
				t.Errorf("server %q not in input", n)
			}
		}
	})
}

func TestChildEnv(t *testing.T) {
	env := config.FromList([]string{"HOME=/h", "PATH=/bin", "MY_KEY=v", "OPENAI_API_KEY=sk-x", "GITHUB_TOKEN=g", "CODEX_API_KEY=c"})
	b, _ := New(env, Options{})
	got := strings.Join(b.childEnv("/h/.codex", userConfig{EnvKey: "MY_KEY"}), " ")
	for _, want := range []string{"MY_KEY=v", "PATH=/bin"} { // CODEX_HOME: TestCodexHomeIsPassedOnlyWhenSet
		if !strings.Contains(got, want) {
			t.Errorf("env lacks %s: %s", want, got)
		}
	}
	for _, bad := range []string{"OPENAI_API_KEY", "GITHUB_TOKEN", "CODEX_API_KEY"} {
		if strings.Contains(got, bad) {
			t.Errorf("env leaks %s: %s", bad, got)
		}
	}
	for _, key := range []string{"OPENAI_API_KEY", "GITHUB*", "*"} {
		got := strings.Join(b.childEnv("/h/.codex", userConfig{EnvKey: key}), " ")
		if strings.Contains(got, "sk-x") || strings.Contains(got, "GITHUB_TOKEN") {
			t.Errorf("env_key %q let a key through: %s", key, got)
		}
	}
	billed, _ := New(env, Options{APIKeyBilling: true})
	if got := strings.Join(billed.childEnv("/h", userConfig{}), " "); !strings.Contains(got, "OPENAI_API_KEY=sk-x") {
		t.Errorf("APIKeyBilling did not pass the key: %s", got)
	}
}

func TestAnswer(t *testing.T) {
	tests := []struct {
		msgs []agentMessage
		want string
	}{
		{nil, ""},
		{[]agentMessage{{"a", "", false}, {"b", "", false}}, "b"},
		{[]agentMessage{{"final", "final_answer", false}, {"note", "commentary", false}}, "final"},
		{[]agentMessage{{"x", "", false}, {"note", "commentary", false}}, "x"},
	}
	for _, tt := range tests {
		if got := answer(tt.msgs).text; got != tt.want {
			t.Errorf("answer(%v) = %q, want %q", tt.msgs, got, tt.want)
		}
	}
}

func TestCodexHomeIsPassedOnlyWhenSet(t *testing.T) {
	for _, tt := range []struct {
		env  []string
		want string // "" = absent
	}{
		{[]string{"HOME=/h", "PATH=/bin"}, ""},
		{[]string{"HOME=/h", "PATH=/bin", "CODEX_HOME=/c/../c"}, "CODEX_HOME=/c"},
	} {
		b, err := New(config.FromList(tt.env), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, kv := range b.childEnv(codexHome(b.env), userConfig{}) {
			if strings.HasPrefix(kv, "CODEX_HOME=") {
				got = kv
			}
		}
		if got != tt.want {
			t.Errorf("env %v: child CODEX_HOME = %q, want %q", tt.env, got, tt.want)
		}
	}
}
