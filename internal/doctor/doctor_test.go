package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
)

// fakeBackend reports a fixed probe; with verify set it also passes the
// metadata-only profile verification.
type fakeBackend struct {
	probe  adapter.Probe
	verify bool
}

func (f fakeBackend) Name() string                        { return f.probe.Backend }
func (f fakeBackend) Probe(context.Context) adapter.Probe { return f.probe }
func (f fakeBackend) Run(context.Context, adapter.Turn) (adapter.Result, error) {
	return adapter.Result{}, fault.New(fault.ProcessError, "test", "fake backends do not run")
}

func (f fakeBackend) Resolve(context.Context, string, string) (adapter.Resolution, error) {
	if !f.verify {
		return adapter.Resolution{}, fault.New(fault.ProtocolError, "test.unverified", "startup report lacked the tool list")
	}
	return adapter.Resolution{Model: "m", Verified: "test"}, nil
}

var _ adapter.Resolver = fakeBackend{}

func notInstalled(name string) fakeBackend {
	searched := []string{"/usr/bin/" + name, "/bin/" + name, "/usr/bin/" + name}
	return fakeBackend{probe: adapter.Probe{Backend: name, AuthStatus: "unknown", Searched: searched,
		Error: &adapter.ProbeError{Code: "CLI_NOT_FOUND", Reason: "cli.not_found",
			Message: name + " CLI not found; searched: " + strings.Join(searched, ", ")}}}
}

func installed(name, auth string, supported, verify bool) fakeBackend {
	return fakeBackend{probe: adapter.Probe{Backend: name, Installed: true, Version: "1.0.0", MinVersion: "2.0.0",
		Supported: supported, AuthStatus: auth}, verify: verify}
}

func run(t *testing.T, backends ...adapter.Backend) Report {
	t.Helper()
	env := config.FromList([]string{"HOME=" + t.TempDir(), "COAGENT8_DIR=" + t.TempDir()})
	return Run(context.Background(), Options{Env: env, Backends: backends})
}

// TestRecommendationsMatchState: with no backend ready, each installed
// backend gets advice for what it lacks; only with none installed does
// doctor say to install one.
func TestRecommendationsMatchState(t *testing.T) {
	tests := []struct {
		name     string
		backends []adapter.Backend
		status   string
		want     []string
	}{
		{"none installed", []adapter.Backend{notInstalled("claude"), notInstalled("codex")}, "degraded_no_active_backends",
			[]string{"No backend CLI is installed: install Claude Code or Codex (or set CLAUDE_PATH / CODEX_PATH to one; " +
				"a coagent8 checkout's .tools/ copies are for its tests, see the README), log in, then run doctor again."}},
		{"installed, not logged in", []adapter.Backend{installed("codex", "unauthenticated", true, true), notInstalled("claude")},
			"degraded_no_active_backends",
			[]string{"Codex is installed but not logged in: log in to Codex (run codex login), then run doctor again."}},
		{"too old", []adapter.Backend{installed("claude", "authenticated", false, true)}, "degraded_no_active_backends",
			[]string{"Claude Code 1.0.0 is installed but unsupported: upgrade it to 2.0.0 or later, then run doctor again."}},
		{"profile not verified", []adapter.Backend{installed("claude", "authenticated", true, false)}, "degraded_no_active_backends",
			[]string{"Claude Code is installed but its read-only profile did not verify: startup report lacked the tool list"}},
		{"one ready", []adapter.Backend{installed("claude", "authenticated", true, true), notInstalled("codex")},
			"partially_configured", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.backends...)
			if r.Status != tt.status {
				t.Errorf("status %q, want %q", r.Status, tt.status)
			}
			if diff := cmp.Diff(tt.want, r.Recommendations); diff != "" {
				t.Errorf("recommendations (-want +got)\n%s", diff)
			}
		})
	}
}

// TestEmptyListsAndSearched: empty backend lists print as [], and a PATH
// directory named twice is listed (and named in the message) once; the
// message names CLAUDE_PATH and what .tools/ is for (issue 18 item 5).
func TestEmptyListsAndSearched(t *testing.T) {
	r := run(t, notInstalled("claude"))
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"installed_backends":[]`, `"ready_backends":[]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %s:\n%s", want, b)
		}
	}
	if diff := cmp.Diff([]string{"/usr/bin/claude", "/bin/claude"}, r.Backends[0].Searched); diff != "" {
		t.Errorf("searched (-want +got)\n%s", diff)
	}
	if got, want := r.Backends[0].Error.Message, "claude CLI not found; searched: /usr/bin/claude, /bin/claude"+
		"; install it on PATH or set CLAUDE_PATH to its absolute path (a coagent8 checkout's .tools/ copies are for its tests, see the README)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// TestWithheldAPIKey (issue 19 item 10): a provider key that is set but
// withheld because API-key billing is off is named, with the variable
// that passes it, in the backend's section and in the advice; never its
// value.
func TestWithheldAPIKey(t *testing.T) {
	key := "synthetic-" + t.Name()
	tests := []struct {
		name     string
		env      []string
		withheld []string
		advice   []string
	}{
		{"withheld", []string{"ANTHROPIC_API_KEY=" + key}, []string{"ANTHROPIC_API_KEY"},
			[]string{"Claude Code is installed but not logged in: ANTHROPIC_API_KEY is set but not passed to the claude CLI because API-key billing is off: set COAGENT8_API_KEY_BILLING=claude to bill that key, or log the CLI in to its own account (run claude and use /login), then run doctor again."}},
		{"billing on", []string{"ANTHROPIC_API_KEY=" + key, "COAGENT8_API_KEY_BILLING=claude"}, nil,
			[]string{"Claude Code is installed but not logged in: log in to Claude Code (run claude and use /login), then run doctor again."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := config.FromList(append([]string{"HOME=" + t.TempDir(), "COAGENT8_DIR=" + t.TempDir()}, tt.env...))
			r := Run(context.Background(), Options{Env: env, Backends: []adapter.Backend{installed("claude", "unauthenticated", true, true)}})
			got := []any{r.Backends[0].APIKeyWithheld, r.Recommendations}
			if d := cmp.Diff([]any{tt.withheld, tt.advice}, got); d != "" {
				t.Errorf("doctor (-want +got):\n%s", d)
			}
			if b, _ := json.Marshal(r); strings.Contains(string(b), key) {
				t.Errorf("the key's value is in the report: %s", b)
			}
		})
	}
}

// TestConfigurationRefusalLeadsAdvice: a configuration that refuses every
// turn (config.File.GovernanceErr, read from a real file) is the first
// recommendation, in its own words, whatever the backends need; without
// one the advice is the backends'. Doctor reads the typed refusal, not a
// section's formatted error text.
func TestConfigurationRefusalLeadsAdvice(t *testing.T) {
	const login = "Codex is installed but not logged in: log in to Codex (run codex login), then run doctor again."
	tests := []struct {
		name string
		body string // config.json; "" writes none
		want []string
	}{
		{"not JSON", "{not json",
			[]string{"Turns are refused until the configuration is fixed: ~/.coagent8/config.json is not valid JSON: line 1, column 2: invalid character 'n' looking for beginning of object key string. Fix it, then run doctor again.", login}},
		{"invalid governance", `{"schemaVersion":1,"governance":{"askAbovePrice":"lots"}}`,
			[]string{"Turns are refused until the configuration is fixed: governance.askAbovePrice: must be a JSON number. Fix it, then run doctor again.", login}},
		{"configuration in force", `{"schemaVersion":1,"governance":{"models":{"allow":["m-1"]}}}`, []string{login}},
		{"no file", "", []string{login}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			dir := filepath.Join(home, ".coagent8")
			env := config.FromList([]string{"HOME=" + home, "COAGENT8_DIR=" + dir})
			if tt.body != "" {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(env.ConfigPath(), []byte(tt.body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cfg, _ := env.Load()
			r := Run(context.Background(), Options{Env: env, Refusal: cfg.GovernanceErr(),
				Backends: []adapter.Backend{installed("codex", "unauthenticated", true, true)}})
			if diff := cmp.Diff(tt.want, r.Recommendations); diff != "" {
				t.Errorf("recommendations (-want +got)\n%s", diff)
			}
		})
	}
}

// TestRefusalOtherError: a refusal that is not a *fault.Error still leads
// the advice (fail closed), without its text: only a fault's Message is
// safe to show.
func TestRefusalOtherError(t *testing.T) {
	env := config.FromList([]string{"HOME=" + t.TempDir(), "COAGENT8_DIR=" + t.TempDir()})
	r := Run(context.Background(), Options{Env: env, Refusal: errors.New("secret internals")})
	if len(r.Recommendations) == 0 || !strings.HasPrefix(r.Recommendations[0], "The configuration refuses every turn") ||
		strings.Contains(strings.Join(r.Recommendations, " "), "secret internals") {
		t.Errorf("recommendations %q", r.Recommendations)
	}
}

// TestContainmentAdvice: a declared gate credential that cannot be read
// keeps Claude Code on its own profile, and doctor says so and how to fix
// it, besides the login its profile then needs; a missing CLI gets the
// install advice only, and a kernel or deliberately profile-contained
// backend none.
func TestContainmentAdvice(t *testing.T) {
	const unreadable = "the credential gate.credentials.anthropic declares, env:C8_KEY, cannot be read: empty or unset; " +
		"set it before starting coagent8, or change gate.credentials.anthropic"
	const login = "Claude Code is installed but not logged in: log in to Claude Code (run claude and use /login), then run doctor again."
	tests := []struct {
		name    string
		backend fakeBackend
		c       Containment
		want    []string
	}{
		{"credential unresolved, not logged in", installed("claude", "unauthenticated", true, true),
			Containment{Backend: "claude", Kind: "profile", Reason: unreadable, ReasonCode: "containment.credential_unresolved"},
			[]string{login, "Claude Code turns run on its own read-only profile, not in coagent8's kernel sandbox: " + unreadable + "; then run doctor again."}},
		{"credential unresolved, logged in", installed("claude", "authenticated", true, true),
			Containment{Backend: "claude", Kind: "profile", Reason: unreadable, ReasonCode: "containment.credential_unresolved"},
			[]string{"Claude Code turns run on its own read-only profile, not in coagent8's kernel sandbox: " + unreadable + "; then run doctor again."}},
		{"CLI missing", notInstalled("claude"),
			Containment{Backend: "claude", Kind: "profile", Reason: "the claude CLI was not found", ReasonCode: "containment.cli_not_found"},
			[]string{"No backend CLI is installed: install Claude Code or Codex (or set CLAUDE_PATH / CODEX_PATH to one; " +
				"a coagent8 checkout's .tools/ copies are for its tests, see the README), log in, then run doctor again."}},
		{"kernel", installed("claude", "authenticated", true, true),
			Containment{Backend: "claude", Kind: "kernel", Reason: "the CLI runs in coagent8's kernel sandbox", ReasonCode: "containment.kernel"}, nil},
		{"no credential", installed("claude", "authenticated", true, true),
			Containment{Backend: "claude", Kind: "profile", Reason: "no gate credential configured", ReasonCode: "containment.no_credential"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := config.FromList([]string{"HOME=" + t.TempDir(), "COAGENT8_DIR=" + t.TempDir()})
			r := Run(context.Background(), Options{Env: env, Backends: []adapter.Backend{tt.backend},
				Containment: func(context.Context) []Containment { return []Containment{tt.c} }})
			if diff := cmp.Diff(tt.want, r.Recommendations); diff != "" {
				t.Errorf("recommendations (-want +got)\n%s", diff)
			}
			if diff := cmp.Diff([]Containment{tt.c}, r.Containment); diff != "" {
				t.Errorf("containment (-want +got)\n%s", diff)
			}
		})
	}
}
