package claude

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/providertest"
)

// realEnv is the environment for the pinned CLI against a local double: an
// empty HOME (no login), the double as base URL and a synthetic key.
func realEnv(t *testing.T, baseURL string, withKey bool) config.Env {
	home := t.TempDir()
	vars := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"CLAUDE_PATH=" + clitest.Path(t, "claude"),
		"ANTHROPIC_BASE_URL=" + baseURL,
	}
	if withKey {
		vars = append(vars, "ANTHROPIC_API_KEY=test-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	}
	return config.FromList(vars)
}

func TestRealCLIAnswersThroughDouble(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "The answer is 4.", Chunks: 3}})
	b := New(realEnv(t, dbl.URL(), true), Options{APIKeyBilling: true})
	rec := &recorder{}
	res, err := b.Run(context.Background(), adapter.Turn{Prompt: "what is 2+2?", Workspace: t.TempDir(), Observer: rec})
	if err != nil {
		t.Fatalf("Run: %v (%#v)", err, err)
	}
	if res.Text != "The answer is 4." {
		t.Fatalf("Text = %q", res.Text)
	}
	if !adapter.IsUUID(res.SessionID) || res.Model == "" || !strings.Contains(res.Verified, "permissionMode=dontAsk") {
		t.Fatalf("result = %+v", res)
	}
	if got := strings.Join(rec.deltas, ""); got != "The answer is 4." {
		t.Fatalf("streamed deltas = %q", got)
	}
	if n := len(dbl.Requests()); n == 0 {
		t.Fatal("double saw no request")
	}
	// A second turn resumes the same session; the double sees turn one.
	res2, err := b.Run(context.Background(), adapter.Turn{Prompt: "and 3+3?", Workspace: t.TempDir(), SessionID: res.SessionID})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if res2.SessionID != res.SessionID {
		t.Fatalf("resumed session %q, want %q", res2.SessionID, res.SessionID)
	}
	reqs := dbl.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "what is 2+2?") {
		t.Fatalf("second request does not carry turn one: %.300s", last)
	}
}

func TestRealCLIWithoutCredentialsIsAuthRequired(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{})
	b := New(realEnv(t, dbl.URL(), false), Options{})
	_, err := b.Run(context.Background(), adapter.Turn{Prompt: "hi", Workspace: t.TempDir()})
	if !fault.HasCode(err, fault.AuthRequired) {
		t.Fatalf("err = %v, want AUTH_REQUIRED", err)
	}
}

func TestAPIKeyIsStrippedUnlessOptedIn(t *testing.T) {
	env := config.FromList([]string{"PATH=/bin", "ANTHROPIC_API_KEY=k", "OPENAI_API_KEY=o"})
	if got := strings.Join(New(env, Options{}).environ(), " "); strings.Contains(got, "API_KEY") {
		t.Fatalf("key leaked into child env: %s", got)
	}
	if got := New(env, Options{APIKeyBilling: true}).environ(); !slices.Contains(got, "ANTHROPIC_API_KEY=k") || slices.Contains(got, "OPENAI_API_KEY=o") {
		t.Fatalf("opt-in env wrong: %v", got)
	}
}

func TestArgvIsTheReadOnlyProfile(t *testing.T) {
	got := argv("sonnet", "high", "0b4d0c43-6c7e-4c5e-9d7e-2a1d3f7a9b11", false)
	want := []string{"-p", "--restricted", "--tools", "Read,Glob,Grep", "--permission-mode", "dontAsk",
		"--permission-prompts", "none", "--settings", `{"disableAllHooks":true}`, "--strict-mcp-config",
		"--mcp-config", `{"mcpServers":{}}`, "--output-format", "stream-json", "--verbose",
		"--include-partial-messages", "--model", "sonnet", "--effort", "high",
		"--session-id", "0b4d0c43-6c7e-4c5e-9d7e-2a1d3f7a9b11"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("argv (-want +got):\n%s", d)
	}
	for _, a := range argv("opus", "", "x", true) {
		if a == "--bare" || a == "--fallback-model" || a == "--dangerously-skip-permissions" {
			t.Fatalf("forbidden flag %s", a)
		}
	}
}

func TestBadInputRefusedBeforeSpawn(t *testing.T) {
	fake := newFake(t, "ok")
	tests := []struct {
		name string
		turn adapter.Turn
		code fault.Code
	}{
		{"flag as model", adapter.Turn{Model: "--yolo"}, fault.InvalidInput},
		{"default model", adapter.Turn{Model: "default"}, fault.InvalidInput},
		{"effort none", adapter.Turn{Effort: "none"}, fault.CLIUnsupported},
		{"non-uuid session", adapter.Turn{SessionID: "../../etc"}, fault.SessionInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.turn.Prompt, tt.turn.Workspace = "hi", t.TempDir()
			_, err := fake.backend.Run(context.Background(), tt.turn)
			if !fault.HasCode(err, tt.code) {
				t.Fatalf("err = %v, want %s", err, tt.code)
			}
			if fake.started() {
				t.Fatal("CLI was started")
			}
		})
	}
}

func TestMissingAndOldCLI(t *testing.T) {
	b := New(config.FromList([]string{"PATH=/nonexistent"}), Options{})
	_, err := b.Run(context.Background(), adapter.Turn{Prompt: "x", Workspace: t.TempDir()})
	if !fault.HasCode(err, fault.CLINotFound) || !strings.Contains(fault.From(err).Message, "/nonexistent/claude") {
		t.Fatalf("err = %v, want CLI_NOT_FOUND naming the searched path", err)
	}
	// An old CLI that rejects the flags before any report.
	old := newFake(t, "")
	old.version = "2.1.200 (Claude Code)"
	old.write(t)
	_, err = old.backend.Run(context.Background(), adapter.Turn{Prompt: "x", Workspace: t.TempDir()})
	if !fault.HasCode(err, fault.CLIUnsupported) || fault.From(err).Details["minimum"] != MinVersion {
		t.Fatalf("err = %v, want CLI_UNSUPPORTED with minimum", err)
	}
	// An old CLI that reports its version in the startup report.
	reported := newFake(t, strings.Replace(goodInit, "2.1.328", "2.1.250", 1)+"\n"+success)
	_, err = reported.backend.Run(context.Background(), adapter.Turn{Prompt: "x", Workspace: t.TempDir()})
	if !fault.HasCode(err, fault.CLIUnsupported) {
		t.Fatalf("err = %v, want CLI_UNSUPPORTED from the startup report", err)
	}
}

type recorder struct{ deltas, warnings []string }

func (r *recorder) Delta(s string)             { r.deltas = append(r.deltas, s) }
func (r *recorder) Activity(kind, name string) {}
func (r *recorder) Warning(s string)           { r.warnings = append(r.warnings, s) }

func TestMain(m *testing.M) {
	if os.Getenv("FAKE_CLAUDE_SCRIPT") != "" {
		runFake()
		return
	}
	os.Exit(m.Run())
}

// runFake replays a scripted stream. "@init" stands for a correct startup
// report with the session id taken from argv; "@hang" writes the pid file
// and sleeps (so tests can check the tree was killed).
func runFake() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println(os.Getenv("FAKE_CLAUDE_VERSION"))
		return
	}
	_ = os.WriteFile(os.Getenv("FAKE_CLAUDE_STARTED"), []byte("1"), 0o600)
	sid := ""
	for i, a := range os.Args {
		if (a == "--session-id" || a == "--resume") && i+1 < len(os.Args) {
			sid = os.Args[i+1]
		}
	}
	script, _ := os.ReadFile(os.Getenv("FAKE_CLAUDE_SCRIPT"))
	for _, line := range strings.Split(string(script), "\n") {
		switch line {
		case "":
		case "@hang":
			_ = os.WriteFile(os.Getenv("FAKE_CLAUDE_PID"), []byte(strconv.Itoa(hostPid())), 0o600)
			time.Sleep(time.Hour)
		default:
			fmt.Println(strings.ReplaceAll(line, "@sid", sid))
		}
	}
}

func hostPid() int {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if f, ok := strings.CutPrefix(line, "NSpid:"); ok {
			n, _ := strconv.Atoi(strings.Fields(f)[0])
			return n
		}
	}
	return os.Getpid()
}

type fake struct {
	dir, version, script string
	backend              *Backend
}

func newFake(t *testing.T, script string) *fake {
	f := &fake{dir: t.TempDir(), version: "2.1.328 (Claude Code)", script: script}
	f.write(t)
	return f
}

func (f *fake) write(t *testing.T) {
	self, _ := os.Executable()
	exe := filepath.Join(f.dir, "claude")
	sh := fmt.Sprintf("#!/bin/sh\nexec %q \"$@\"\n", self)
	if err := os.WriteFile(exe, []byte(sh), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(f.dir, "script"), []byte(f.script), 0o600)
	f.backend = New(config.FromList([]string{
		"PATH=/usr/bin:/bin", "CLAUDE_PATH=" + exe, "HOME=" + f.dir,
	}), Options{})
	f.backend.env = f.backend.env.
		With("FAKE_CLAUDE_SCRIPT", filepath.Join(f.dir, "script")).
		With("FAKE_CLAUDE_VERSION", f.version).
		With("FAKE_CLAUDE_STARTED", filepath.Join(f.dir, "started")).
		With("FAKE_CLAUDE_PID", filepath.Join(f.dir, "pid"))
	// The fake's control variables must reach it through the allowlist.
	envAllowForTest(f.backend)
}

func (f *fake) started() bool { _, err := os.Stat(filepath.Join(f.dir, "started")); return err == nil }

func envAllowForTest(b *Backend) { b.testOnlyAllow = []string{"FAKE_CLAUDE_*"} }

func TestResolveVerifiesWithoutModelRequest(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{})
	b := New(realEnv(t, dbl.URL(), true), Options{APIKeyBilling: true})
	res, err := b.Resolve(context.Background(), t.TempDir(), "haiku")
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if !strings.HasPrefix(res.Model, "claude-haiku") || !strings.Contains(res.Verified, "dontAsk") {
		t.Fatalf("resolution = %+v", res)
	}
	for _, r := range dbl.Requests() {
		if strings.HasPrefix(r.Path, "/v1/messages") {
			t.Fatalf("probe sent a model request: %s", r.Path)
		}
	}
}

func TestResolveIsCachedAcrossBackends(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{})
	env := realEnv(t, dbl.URL(), true)
	dir := t.TempDir()
	first, err := New(env, Options{APIKeyBilling: true, CacheDir: dir}).Resolve(context.Background(), t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	// A second backend (a new process in real use) with a broken CLI path
	// would fail to probe: a hit must not start the CLI at all.
	b2 := New(env, Options{APIKeyBilling: true, CacheDir: dir})
	second, err := b2.Resolve(context.Background(), t.TempDir(), "")
	if err != nil || second.Model != first.Model || !strings.HasSuffix(second.Verified, "(cached)") {
		t.Fatalf("second = %+v, %v; first = %+v", second, err, first)
	}
}
