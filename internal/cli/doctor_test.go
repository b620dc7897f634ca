package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDoctorEmptyListsAndExit: with no backend installed doctor still
// exits 0 (it reports), its empty lists print as [] (governance model
// lists too), and --help says that the status field tells readiness.
func TestDoctorEmptyListsAndExit(t *testing.T) {
	code, out, errs := runCLI(t, testEnv(t, "PATH=/nonexistent-c8"), "", "doctor")
	if code != ExitOK {
		t.Fatalf("doctor: exit %d: %s", code, errs)
	}
	var rep struct {
		Status   string          `json:"status"`
		Ready    json.RawMessage `json:"ready_backends"`
		Sections struct {
			Governance struct {
				Models map[string]json.RawMessage `json:"models"`
			} `json:"governance"`
		} `json:"sections"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := map[string]string{"status": rep.Status, "ready": string(rep.Ready)}
	for k, v := range rep.Sections.Governance.Models {
		got[k] = string(v)
	}
	want := map[string]string{"status": "degraded_no_active_backends", "ready": "[]", "allow": "[]", "ask": "[]", "deny": "[]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("doctor report (-want +got)\n%s", diff)
	}
	_, help, _ := runCLI(t, testEnv(t), "", "doctor", "--help")
	if !strings.Contains(help, `exits 0 whenever the report was`) || !strings.Contains(help, `Readiness is in the "status" field`) {
		t.Errorf("doctor --help does not explain the exit status:\n%s", help)
	}
}

// TestDoctorNamesConfigCause: with an unusable config.json, doctor says
// why (which key, what is wrong), redacted: a literal credential's path is
// named and its value never printed; and its first recommendation is the
// configuration's refusal, before any backend's.
func TestDoctorNamesConfigCause(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("Q", 40)
	tests := []struct{ name, body, want, reason string }{
		{"not JSON", "{not json", "config.json:1:2: invalid JSON: invalid character", "config.invalid_json"},
		{"truncated", `{"governance":{"models":`, "config.json:1:25: invalid JSON: unexpected EOF: the file ends before its JSON value does", "config.invalid_json"},
		{"an array", `[1]`, "not a JSON object", "config.governance_invalid"},
		{"literal credential", `{"gate":{"credentials":{"anthropic":"` + key + `"}}}`, "gate.credentials.anthropic", "config.literal_credential"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t, "PATH=/nonexistent-c8")
			if err := os.WriteFile(env.ConfigPath(), []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, out, _ := runCLI(t, env, "", "doctor")
			var rep struct {
				Sections struct {
					Governance struct{ Error, Reason, Cause string } `json:"governance"`
				} `json:"sections"`
				Recommendations []string `json:"recommendations"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			g := rep.Sections.Governance
			if g.Error == "" || g.Reason != tt.reason || !strings.Contains(g.Cause, tt.want) || strings.Contains(out, key) {
				t.Errorf("governance error %q, reason %q, cause %q; want reason %s, a cause naming %q and no key", g.Error, g.Reason, g.Cause, tt.reason, tt.want)
			}
			if r := rep.Recommendations; len(r) == 0 || !strings.HasPrefix(r[0], "Turns are refused until the configuration is fixed: ") ||
				!strings.HasSuffix(r[0], "Fix it, then run doctor again.") {
				t.Errorf("recommendations %q, want the configuration refusal first", r)
			}
		})
	}
}

// TestDoctorWarnsUnsafeUpstream: while COAGENT8_UNSAFE_LOOPBACK_UPSTREAM
// is set doctor warns, naming the variable and that the real credential
// goes to a local process; unset, there is no warning.
func TestDoctorWarnsUnsafeUpstream(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{"unset", "", ""},
		{"valid", "anthropic=http://127.0.0.1:9", "credential in the clear to the local process at http://127.0.0.1:9"},
		{"invalid", "anthropic=https://api.example.com", "is set but invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			extra := []string{"PATH=/nonexistent-c8"}
			if tt.value != "" {
				extra = append(extra, UnsafeUpstreamVar+"="+tt.value)
			}
			code, out, errs := runCLI(t, testEnv(t, extra...), "", "doctor")
			if code != ExitOK {
				t.Fatalf("doctor: exit %d: %s", code, errs)
			}
			var rep struct {
				Warnings []string `json:"warnings"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			got := strings.Join(rep.Warnings, "\n")
			if tt.want == "" && got != "" || tt.want != "" && (!strings.Contains(got, tt.want) || !strings.Contains(got, UnsafeUpstreamVar)) {
				t.Errorf("warnings = %q, want one naming %s and %q", got, UnsafeUpstreamVar, tt.want)
			}
		})
	}
}

// TestDoctorContainmentTruthful: with gate.credentials.anthropic
// declaring a variable that is unset, doctor reports Claude Code on its
// profile because the credential cannot be read (as delegate refuses the
// job, delegate.credential_unresolved) and says how to fix it; with the
// variable set but no claude CLI, the reason is the missing CLI, not the
// sandbox. The credential's value is never printed.
func TestDoctorContainmentTruthful(t *testing.T) {
	const cfg = `{"gate":{"credentials":{"anthropic":"env:C8_TEST_ANTHROPIC_KEY"}}}`
	key := "sk-ant-api03-" + strings.Repeat("S", 40)
	tests := []struct {
		name, code, reason, advice string
		env                        []string
	}{
		{"declared variable unset", "containment.credential_unresolved",
			"the credential gate.credentials.anthropic declares, env:C8_TEST_ANTHROPIC_KEY, cannot be read", "Claude Code turns run on its own read-only profile", nil},
		{"no claude CLI", "containment.cli_not_found", "the claude CLI was not found", "No backend CLI is installed",
			[]string{"C8_TEST_ANTHROPIC_KEY=" + key}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t, append([]string{"PATH=/nonexistent-c8"}, tt.env...)...)
			if err := os.WriteFile(env.ConfigPath(), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errs := runCLI(t, env, "", "doctor")
			if code != ExitOK {
				t.Fatalf("doctor: exit %d: %s", code, errs)
			}
			var rep struct {
				Containment []struct {
					Backend, Containment, Reason, ReasonCode string
				} `json:"containment"`
				Recommendations []string `json:"recommendations"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			got := map[string]string{}
			for _, c := range rep.Containment {
				if c.Backend == "claude" {
					got = map[string]string{"containment": c.Containment, "code": c.ReasonCode}
					if !strings.HasPrefix(c.Reason, tt.reason) {
						t.Errorf("reason %q, want it to begin %q", c.Reason, tt.reason)
					}
				}
			}
			want := map[string]string{"containment": "profile", "code": tt.code}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("claude containment (-want +got)\n%s", diff)
			}
			if !strings.Contains(strings.Join(rep.Recommendations, "\n"), tt.advice) {
				t.Errorf("recommendations %q, want one saying %q", rep.Recommendations, tt.advice)
			}
			if strings.Contains(out, key) {
				t.Errorf("the credential's value is in the report:\n%s", out)
			}
		})
	}
}
