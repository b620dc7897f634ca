package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/providertest"
)

const gateModel = "claude-sonnet-4-5"

// syntheticCredential is an Anthropic-shaped key assembled at run time.
func syntheticCredential() string { return "sk-ant-api03-" + strings.Repeat("A", 93) + "AA" }

// gateRealKey is the synthetic real key the gate resolves for its grants.
func gateRealKey() string { return "sk-ant-api03-" + strings.Repeat("R", 30) + "realkey" }

// labelledPolicy labels private/** as confidential at weight 0.5: above
// the portal threshold (filtered), below forbidden (not refused).
const labelledPolicy = `{"egress":{"portal_threshold":0.3,"forbidden_threshold":0.8,
	"labels":[{"name":"deal","paths":["private/**"],"classification":0.5,"category":"confidential"}],
	"purposes":{"provider-request":{"max_uses":100,"max_bytes":100000000}}}}`

// gateEnv is a fresh state directory (optionally with config.json) and
// the environment of a gate server using it.
func gateEnv(t *testing.T, configJSON string) (config.Env, string) {
	t.Helper()
	state := t.TempDir()
	writeGateConfig(t, state, configJSON, "env:REAL_ANTHROPIC")
	return config.FromList([]string{"COAGENT8_DIR=" + state, "HOME=" + t.TempDir(), "REAL_ANTHROPIC=" + gateRealKey()}), state
}

// TestGateServeRefusesWithoutValidPolicy: a malformed egress section, an
// unreadable config file, or path labels without --workspace refuse to
// start, naming the key (or flag); nothing listens.
func TestGateServeRefusesWithoutValidPolicy(t *testing.T) {
	const key, flag = `config.json key "egress"`, "--workspace"
	tests := []struct {
		name, config, want, names string
		args                      []string
	}{
		{"unknown field", `{"egress":{"portal_threshold":0.3,"forbidden_threshold":0.8,"upstream":"https://x"}}`, `unknown field "upstream"`, key, nil},
		{"thresholds missing", `{"egress":{}}`, "portal_threshold and forbidden_threshold are required", key, nil},
		{"thresholds inverted", `{"egress":{"portal_threshold":0.9,"forbidden_threshold":0.5}}`, "R-185", key, nil},
		{"null section", `{"egress":null}`, "required", key, nil},
		{"file not JSON", `{"egress":`, "cannot be read", key, nil},
		{"path labels without workspace", labelledPolicy, "give --workspace DIR", flag, nil},
		{"workspace missing", labelledPolicy, "not a directory", flag, []string{"--workspace", "/nonexistent-coagent8-ws"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := gateEnv(t, tt.config)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var out, errb bytes.Buffer
			args := append([]string{"gate", "serve", "--listen", "127.0.0.1:0"}, tt.args...)
			code := MainEnv(ctx, args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env)
			errs := errb.String()
			if code != ExitUsage || !strings.Contains(errs, tt.want) || !strings.Contains(errs, tt.names) || out.Len() != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, %q naming %s", code, out.String(), errs, ExitUsage, tt.want, tt.names)
			}
		})
	}
}

// syncBuffer is an io.Writer safe to read while a server writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveInProcess runs `coagent8 gate serve` until the test ends and
// returns its URL and egress policy source.
func serveInProcess(t *testing.T, env config.Env, upstream string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errb := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- MainEnv(ctx, []string{"gate", "serve", "--listen", "127.0.0.1:0", "--unsafe-loopback-upstream",
			"anthropic=" + upstream}, Stdio{In: strings.NewReader(""), Out: out, Err: errb}, env)
	}()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var m map[string]string
		if json.Unmarshal([]byte(out.String()), &m) == nil && m["listening"] != "" {
			return m["listening"], m["egress_policy"]
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("gate serve exited %d: %s", code, errb.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("gate serve did not start: %s", errb.String())
	return "", ""
}

// grantPhantom creates a grant through the CLI and returns its phantom.
func grantPhantom(t *testing.T, env config.Env) string {
	t.Helper()
	code, out, errs := runGate(t, env, "grant", "--provider", "anthropic", "--model", gateModel, "--job", "j-egress",
		"--secret", "env:REAL_ANTHROPIC", "--max-requests", "50", "--max-tokens", "10000000", "--max-usd", "100",
		"--price-input", "3", "--price-output", "15")
	if code != ExitOK {
		t.Fatalf("grant: exit %d: %s", code, errs)
	}
	var g struct{ Phantom string }
	if err := json.Unmarshal([]byte(out), &g); err != nil || g.Phantom == "" {
		t.Fatalf("grant output %q: %v", out, err)
	}
	return g.Phantom
}

func postMessages(t *testing.T, url, phantom, text string) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": gateModel, "max_tokens": 64,
		"messages": []any{map[string]any{"role": "user", "content": text}}})
	req, _ := http.NewRequest("POST", url+"/v1/messages", bytes.NewReader(body))
	req.Header.Set("X-Api-Key", phantom)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// eventsOf reads the gate's event log.
func eventsOf(t *testing.T, state string) []event.Event {
	t.Helper()
	f, err := os.Open(filepath.Join(state, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []event.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e event.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("event line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// refusedWith reports whether the log holds an egress refusal with reason.
func refusedWith(events []event.Event, reason string) bool {
	for _, e := range events {
		if e.Type == event.TypeRefusal && e.Reason == reason && e.Rule == "egress."+string(egress.ProviderRequest) {
			return true
		}
	}
	return false
}

// TestGateServeDecidesEveryBody: the shipped command, with no egress
// section, serves under the built-in policy: an ordinary request reaches
// the provider double; one carrying a credential in its body is refused
// before any byte leaves, and the refusal is a recorded event.
func TestGateServeDecidesEveryBody(t *testing.T) {
	env, state := gateEnv(t, "")
	anth := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "ok"}})
	phantom := grantPhantom(t, env)
	url, source := serveInProcess(t, env, anth.URL())
	if source != "built-in" {
		t.Errorf("egress policy source %q, want built-in", source)
	}
	if resp := postMessages(t, url, phantom, "refactor the parser please"); resp.StatusCode != 200 {
		t.Fatalf("ordinary request: %d %s", resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason"))
	}
	resp := postMessages(t, url, phantom, "deploy with "+syntheticCredential())
	if resp.StatusCode != 403 || resp.Header.Get("X-Coagent8-Gate-Reason") != egress.ReasonCategory {
		t.Fatalf("credential request: %d %q, want 403 %s", resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason"), egress.ReasonCategory)
	}
	reqs := anth.Requests()
	if len(reqs) != 1 {
		t.Fatalf("provider double got %d requests, want only the ordinary one", len(reqs))
	}
	if strings.Contains(string(reqs[0].Body), "AAAAAAAAAA") {
		t.Fatal("the credential reached the provider double")
	}
	evs := eventsOf(t, state)
	if !refusedWith(evs, egress.ReasonCategory) {
		t.Errorf("no egress refusal event in %d events", len(evs))
	}
	n := 0
	for _, e := range evs {
		if e.Type == event.TypeRefusal && e.Reason == egress.ReasonCategory {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d refusal events for one refused request, want 1 (issue 19 item 14)", n)
	}
	raw, _ := os.ReadFile(filepath.Join(state, "events.jsonl"))
	if strings.Contains(string(raw), "AAAAAAAAAA") {
		t.Error("the event log contains the credential")
	}
}
