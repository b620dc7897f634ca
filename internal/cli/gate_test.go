package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/gate"
)

func runGate(t *testing.T, env config.Env, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := MainEnv(context.Background(), append([]string{"gate"}, args...), Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env)
	return code, out.String(), errb.String()
}

// writeGateConfig writes state/config.json: configJSON (an object, or
// "" for none) with gate.credentials.anthropic = ref added. A configJSON
// that is not an object is written as it is (tests of unusable files).
func writeGateConfig(t *testing.T, state, configJSON, ref string) {
	t.Helper()
	top := map[string]any{}
	if configJSON != "" && json.Unmarshal([]byte(configJSON), &top) != nil {
		if err := os.WriteFile(filepath.Join(state, "config.json"), []byte(configJSON), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	top["gate"] = map[string]any{"credentials": map[string]string{"anthropic": ref}}
	b, _ := json.Marshal(top)
	if err := os.WriteFile(filepath.Join(state, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// declaredEnv is a fresh environment whose config.json declares ref as
// the Anthropic credential.
func declaredEnv(t *testing.T, ref string) config.Env {
	t.Helper()
	state := t.TempDir()
	writeGateConfig(t, state, "", ref)
	return config.FromList([]string{"COAGENT8_DIR=" + state, "HOME=" + t.TempDir()})
}

func TestGateGrantInspectRevokeSettle(t *testing.T) {
	env := declaredEnv(t, "env:REAL_KEY")
	code, out, errs := runGate(t, env, "grant", "--provider", "anthropic", "--model", "claude-sonnet-4-5",
		"--job", "j1", "--secret", "env:REAL_KEY", "--max-requests", "3", "--max-tokens", "100000",
		"--output-ceiling", "4096", "--max-usd", "2", "--price-input", "3", "--price-output", "15")
	if code != ExitOK {
		t.Fatalf("grant: exit %d: %s", code, errs)
	}
	var g struct {
		ID, Phantom, State string
		Limits             struct{ Requests int64 }
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil || !strings.HasPrefix(g.Phantom, "c8g_") || g.Limits.Requests != 3 {
		t.Fatalf("grant output %q: %v", out, err)
	}
	code, out, _ = runGate(t, env, "inspect", g.ID)
	if code != ExitOK || strings.Contains(out, g.Phantom) || !strings.Contains(out, `"state": "live"`) || !strings.Contains(out, `"attempts": []`) {
		t.Errorf("inspect: %d %s", code, out)
	}
	if code, out, _ = runGate(t, env, "revoke", g.ID); code != ExitOK || !strings.Contains(out, `"state": "revoked"`) {
		t.Errorf("revoke: %d %s", code, out)
	}
	if code, _, errs = runGate(t, env, "inspect", "g_missing"); code != ExitUsage || !strings.Contains(errs, "no grant") {
		t.Errorf("inspect missing: %d %s", code, errs)
	}
}

func TestGateGrantRefusesLiteralKey(t *testing.T) {
	env := config.FromList([]string{"COAGENT8_DIR=" + t.TempDir()})
	key := "sk-ant-" + strings.Repeat("K", 30)
	code, _, errs := runGate(t, env, "grant", "--provider", "anthropic", "--model", "m", "--job", "j",
		"--secret", key, "--max-requests", "1", "--max-tokens", "1", "--max-usd", "5", "--price-input", "1", "--price-output", "15")
	if code != ExitUsage || strings.Contains(errs, "KKKK") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestGateServeRefusesNonLoopback(t *testing.T) {
	env := config.FromList([]string{"COAGENT8_DIR=" + t.TempDir()})
	code, _, errs := runGate(t, env, "serve", "--listen", "0.0.0.0:0")
	if code != ExitRefused || !strings.Contains(errs, "gate.listen") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestGateGrantOnlyDeclaredCredential: a grant naming another reference
// than config.json's gate.credentials declares — any readable file, an
// undeclared variable — is refused; without --secret the declared one is
// used (issue 18 scope 3).
func TestGateGrantOnlyDeclaredCredential(t *testing.T) {
	tests := []struct {
		name, secret string
		wantCode     int
		wantRef      string
	}{
		{"declared", "env:REAL_KEY", ExitOK, "env:REAL_KEY"},
		{"default is the declared one", "", ExitOK, "env:REAL_KEY"},
		{"file:/etc/shadow", "file:/etc/shadow", ExitRefused, ""},
		{"undeclared env var", "env:HOME", ExitRefused, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := declaredEnv(t, "env:REAL_KEY")
			args := []string{"grant", "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--job", "j1",
				"--max-requests", "1", "--max-tokens", "1000", "--output-ceiling", "1000", "--max-usd", "5", "--price-input", "3", "--price-output", "15"}
			if tt.secret != "" {
				args = append(args, "--secret", tt.secret)
			}
			code, out, errs := runGate(t, env, args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d: %s", code, tt.wantCode, errs)
			}
			if tt.wantCode != ExitOK {
				if !strings.Contains(errs, "secret.undeclared") {
					t.Errorf("stderr %q lacks the reason", errs)
				}
				return
			}
			var g struct {
				SecretRef string `json:"secret_ref"`
			}
			if err := json.Unmarshal([]byte(out), &g); err != nil || g.SecretRef != tt.wantRef {
				t.Errorf("grant output %q: secret_ref %q, want %q", out, g.SecretRef, tt.wantRef)
			}
		})
	}
}

// TestGateRefusesLiteralInConfig: a configuration with a literal
// provider key refuses to load for the gate — grant and serve — naming
// the key path, never the value.
func TestGateRefusesLiteralInConfig(t *testing.T) {
	state := t.TempDir()
	key := "sk-ant-api03-" + strings.Repeat("W", 40) + "AA"
	if err := os.WriteFile(filepath.Join(state, "config.json"), []byte(`{"gate":{"credentials":{"anthropic":"`+key+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := config.FromList([]string{"COAGENT8_DIR=" + state, "HOME=" + t.TempDir()})
	for _, args := range [][]string{
		{"grant", "--provider", "anthropic", "--model", "m", "--job", "j", "--max-requests", "1", "--max-tokens", "1", "--max-usd", "5", "--price-input", "1", "--price-output", "15"},
		{"serve", "--listen", "127.0.0.1:0"},
	} {
		code, _, errs := runGate(t, env, args...)
		if code != ExitUsage || !strings.Contains(errs, "gate.credentials.anthropic") || strings.Contains(errs, "WWWW") {
			t.Errorf("%s: exit %d, stderr %q; want a usage error naming gate.credentials.anthropic without the value", args[0], code, errs)
		}
	}
}

// TestGateGrantLongContextPrice: the long-context tier flags reach the
// grant's stored price (issue 18 scope 5).
func TestGateGrantLongContextPrice(t *testing.T) {
	env := declaredEnv(t, "env:REAL_KEY")
	code, out, errs := runGate(t, env, "grant", "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--job", "j1",
		"--max-requests", "1", "--max-tokens", "1000", "--output-ceiling", "1000", "--max-usd", "2", "--price-input", "3", "--price-output", "15",
		"--price-long-context-tokens", "200000", "--price-long-input", "6", "--price-long-output", "22.5")
	if code != ExitOK {
		t.Fatalf("grant: exit %d: %s", code, errs)
	}
	var g struct {
		Price struct {
			LongTokens int64   `json:"long_context_tokens"`
			LongInput  float64 `json:"long_input_per_mtok"`
			LongOutput float64 `json:"long_output_per_mtok"`
		}
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil || g.Price.LongTokens != 200000 || g.Price.LongInput != 6 || g.Price.LongOutput != 22.5 {
		t.Errorf("grant price %+v (%v), want the long-context tier", g.Price, err)
	}
	if code, _, _ := runGate(t, env, "grant", "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--job", "j1",
		"--max-requests", "1", "--max-tokens", "1000", "--max-usd", "5", "--price-input", "3", "--price-output", "15",
		"--price-long-context-tokens", "-1"); code != ExitUsage {
		t.Errorf("negative threshold: exit %d, want %d", code, ExitUsage)
	}
}

// TestGateGrantCachePricesDefault: cache classes left out of a grant's
// prices are charged at the dearest rate relative to input (write twice
// the input price, read the input price), never free: Claude Code reads
// most input from the prompt cache, and a cache price of 0 let those
// tokens pass the USD budget uncounted (helper report 2026-12-06). A
// price given, 0 included, is kept.
func TestGateGrantCachePricesDefault(t *testing.T) {
	env := declaredEnv(t, "env:REAL_KEY")
	type price struct{ Write, Read float64 }
	grant := func(extra ...string) price {
		p := grantPrice(t, env, extra...)
		return price{p.CacheWritePerMTok, p.CacheReadPerMTok}
	}
	if got, want := grant(), (price{Write: 6, Read: 3}); got != want {
		t.Errorf("default cache prices %+v, want %+v", got, want)
	}
	if got, want := grant("--price-cache-write", "3.75", "--price-cache-read", "0"), (price{Write: 3.75, Read: 0}); got != want {
		t.Errorf("given cache prices %+v, want %+v", got, want)
	}
}

// grantPrice runs `gate grant` of claude-sonnet-4-5 at $3/$15 per million
// (1 request, 1,000 tokens, ceiling 1,000, $2) with extra flags and
// returns the price the grant records.
func grantPrice(t *testing.T, env config.Env, extra ...string) gate.Price {
	t.Helper()
	args := append([]string{"grant", "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--job", "j1",
		"--max-requests", "1", "--max-tokens", "1000", "--output-ceiling", "1000", "--max-usd", "2", "--price-input", "3", "--price-output", "15"}, extra...)
	code, out, errs := runGate(t, env, args...)
	var g struct{ Price gate.Price }
	if code != ExitOK || json.Unmarshal([]byte(out), &g) != nil {
		t.Fatalf("grant %v: exit %d: %s", extra, code, errs)
	}
	return g.Price
}

// TestGateGrantCacheDefaultsKeepTheTier: a defaulted cache price never
// makes a complete set of given prices break the long-context rule (each
// long rate at least its base rate). Anthropic's own prices with the base
// cache prices left out (long cache read 0.6 below the defaulted base 3)
// were refused gate.price, whose message asked for the --price-long-*
// flags already given (red team). A defaulted base rate is at most the
// long rate given; a defaulted long rate at least the base rate given.
func TestGateGrantCacheDefaultsKeepTheTier(t *testing.T) {
	env := declaredEnv(t, "env:REAL_KEY")
	type price struct{ Write, Read, LongWrite, LongRead float64 }
	long := []string{"--price-long-context-tokens", "200000", "--price-long-input", "6", "--price-long-output", "22.5"}
	for _, tt := range []struct {
		name  string
		extra []string
		want  price
	}{
		{"long cache given, base defaulted", []string{"--price-long-cache-write", "7.5", "--price-long-cache-read", "0.6"},
			price{Write: 6, Read: 0.6, LongWrite: 7.5, LongRead: 0.6}},
		{"base cache given above the long default", []string{"--price-cache-write", "20", "--price-cache-read", "7"},
			price{Write: 20, Read: 7, LongWrite: 20, LongRead: 7}},
		{"all defaulted", nil, price{Write: 6, Read: 3, LongWrite: 12, LongRead: 6}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := grantPrice(t, env, append(long, tt.extra...)...)
			if got := (price{p.CacheWritePerMTok, p.CacheReadPerMTok, p.LongCacheWritePerMTok, p.LongCacheReadPerMTok}); got != tt.want {
				t.Errorf("cache prices %+v, want %+v", got, tt.want)
			}
		})
	}
	// A long cache read given as 0 does not make the defaulted base read
	// free: refused gate.price as before.
	code, _, errs := runGate(t, env, "grant", "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--job", "j1",
		"--max-requests", "1", "--max-tokens", "1000", "--output-ceiling", "1000", "--max-usd", "2", "--price-input", "3", "--price-output", "15",
		"--price-long-context-tokens", "200000", "--price-long-input", "6", "--price-long-output", "22.5", "--price-long-cache-read", "0")
	if code != ExitUsage || !strings.Contains(errs, "gate.price") {
		t.Errorf("long cache read 0: exit %d, stderr %q; want gate.price", code, errs)
	}
}

// TestGateGrantNamesEveryMissingFlag: one error lists every required flag
// left out, and a --max-usd or --max-tokens below one request's
// reservation is refused at grant time naming the minimum (issue 19 item
// 14).
func TestGateGrantNamesEveryMissingFlag(t *testing.T) {
	env := declaredEnv(t, "env:REAL_KEY")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"nothing", nil, "gate grant needs --provider, --model, --job, --max-requests, --max-tokens, --max-usd, --price-input, --price-output"},
		{"budgets only", []string{"--provider", "anthropic", "--model", "m", "--job", "j", "--price-input", "3", "--price-output", "15"},
			"gate grant needs --max-requests, --max-tokens, --max-usd"},
		// A grant without an output price would meter every output token
		// as free (newcomer report): the flag is required, 0 only given.
		{"output price missing", []string{"--provider", "anthropic", "--model", "m", "--job", "j", "--price-input", "3",
			"--max-requests", "1", "--max-tokens", "1000", "--max-usd", "0.01"},
			"gate grant needs --price-output"},
		{"zero budgets are given, not missing", []string{"--provider", "anthropic", "--model", "m", "--job", "j", "--price-input", "3", "--price-output", "15",
			"--max-requests", "0", "--max-tokens", "1000", "--max-usd", "0"},
			"request, token and spend budgets must all be positive"},
		{"max-usd below one reservation", []string{"--provider", "anthropic", "--model", "claude-sonnet-4-5", "--job", "j", "--max-requests", "1",
			"--max-tokens", "200000", "--max-usd", "1", "--price-input", "3", "--price-output", "15"},
			"the spend budget $1 cannot cover one request: a request naming no output limit reserves 128000 output tokens (the output ceiling) at $15 per million = $1.92; give --max-usd of at least 1.92"},
		// A token budget below the output ceiling would refuse every
		// request naming no output limit budget.request_tokens (newcomer
		// report): refused at grant time as the spend budget is.
		{"max-tokens below the output ceiling", []string{"--provider", "anthropic", "--model", "claude-sonnet-4-5", "--job", "j", "--max-requests", "1",
			"--max-tokens", "100000", "--max-usd", "5", "--price-input", "3", "--price-output", "15"},
			"the token budget 100000 cannot cover one request: a request naming no output limit reserves 128000 output tokens (the output ceiling); give --max-tokens of at least 128000, or a lower --output-ceiling"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runGate(t, env, append([]string{"grant"}, tt.args...)...)
			if code != ExitUsage || out != "" || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errs, ExitUsage, tt.want)
			}
		})
	}
}
