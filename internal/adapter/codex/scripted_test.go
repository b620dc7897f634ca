package codex

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
)

// fakeHarness is a harness whose CODEX_PATH is this test binary acting as
// a scripted app-server (TestMain).
func fakeHarness(t *testing.T, sc scenario) *harness {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, exe, "")
	if err := writeScenario(h.home, sc); err != nil {
		t.Fatal(err)
	}
	return h
}

func str(s string) *string { return &s }

func note(method string, params map[string]any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"method": method, "params": params})
	return b
}

func agentMessageNote(text string) json.RawMessage {
	return note("item/completed", map[string]any{"turnId": "turn-1", "completedAtMs": 1,
		"item": map[string]any{"type": "agentMessage", "id": "m1", "text": text, "phase": "final_answer"}})
}

func failed(info any, msg string) json.RawMessage {
	return note("turn/completed", map[string]any{"threadId": "t", "turn": map[string]any{"id": "turn-1", "items": []any{},
		"status": "failed", "error": map[string]any{"message": msg, "codexErrorInfo": info}}})
}

// wantFault checks err's code and reason.
func wantFault(t *testing.T, err error, code fault.Code, reason string) *fault.Error {
	t.Helper()
	var fe *fault.Error
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v (%T), want *fault.Error %s/%s", err, err, code, reason)
	}
	if fe.Code != code || fe.Reason != reason {
		t.Fatalf("err = %s/%s %q, want %s/%s", fe.Code, fe.Reason, fe.Message, code, reason)
	}
	return fe
}

// TestScriptedRefusals: tampered thread and MCP reports are refused before
// turn/start, with the process ended.
func TestScriptedRefusals(t *testing.T) {
	on := "connected"
	tests := []struct {
		name   string
		sc     scenario
		code   fault.Code
		reason string
	}{
		{"workspaceWrite", scenario{Sandbox: json.RawMessage(`{"type":"workspaceWrite","networkAccess":false,"writableRoots":[]}`)}, fault.SandboxUnavailable, ReasonThreadPolicy},
		{"dangerFullAccess", scenario{Sandbox: json.RawMessage(`{"type":"dangerFullAccess"}`)}, fault.SandboxUnavailable, ReasonThreadPolicy},
		{"network on", scenario{Sandbox: json.RawMessage(`{"type":"readOnly","networkAccess":true}`)}, fault.SandboxUnavailable, ReasonThreadPolicy},
		{"network missing", scenario{Sandbox: json.RawMessage(`{"type":"readOnly"}`)}, fault.SandboxUnavailable, ReasonThreadPolicy},
		{"sandbox null", scenario{Sandbox: json.RawMessage(`null`)}, fault.SandboxUnavailable, ReasonThreadPolicy},
		{"on-request", scenario{ApprovalPolicy: json.RawMessage(`"on-request"`)}, fault.SandboxUnavailable, ReasonThreadPolicy},
		{"untrusted", scenario{ApprovalPolicy: json.RawMessage(`"untrusted"`)}, fault.SandboxUnavailable, ReasonThreadPolicy},
		{"granular", scenario{ApprovalPolicy: json.RawMessage(`{"granular":{"mcp_elicitations":false,"rules":false,"sandbox_approval":false}}`)}, fault.SandboxUnavailable, ReasonThreadPolicy},
		{"approval null", scenario{ApprovalPolicy: json.RawMessage(`null`)}, fault.SandboxUnavailable, ReasonThreadPolicy},
		{"server omitted", scenario{ConfigServers: []string{"alpha"}}, fault.SandboxUnavailable, ReasonMCPEnabled},
		{"server connected", scenario{ConfigServers: []string{"alpha"}, MCPPages: [][]statusEntry{{{Name: "alpha", RuntimeStatus: &on}}}}, fault.SandboxUnavailable, ReasonMCPEnabled},
		{"server status null", scenario{ConfigServers: []string{"alpha"}, MCPPages: [][]statusEntry{{{Name: "alpha"}}}}, fault.SandboxUnavailable, ReasonMCPEnabled},
		{"unconfigured server live", scenario{MCPPages: [][]statusEntry{{{Name: "plugin-x", RuntimeStatus: &on}}}}, fault.SandboxUnavailable, ReasonMCPEnabled},
		{"enabled on page 2", scenario{ConfigServers: []string{"a", "b"}, MCPPages: [][]statusEntry{
			{{Name: "a", RuntimeStatus: str("disabled")}}, {{Name: "b", RuntimeStatus: str("starting")}}}}, fault.SandboxUnavailable, ReasonMCPEnabled},
		{"too old", scenario{UserAgent: "coagent8/0.150.2 (Fake) x"}, fault.CLIUnsupported, "codex.version"},
		{"no version", scenario{UserAgent: "garbage"}, fault.CLIUnsupported, "codex.version"},
		{"resume unknown", scenario{ResumeError: true}, fault.SessionInvalid, "codex.resume"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fakeHarness(t, tt.sc)
			turn := h.turn("hello")
			if tt.sc.ResumeError {
				turn.SessionID = "01a22ac1-0000-7000-8000-00000000abcd"
			}
			_, err := h.backend(Options{}).Run(context.Background(), turn)
			wantFault(t, err, tt.code, tt.reason)
			if slices.Contains(fakeLog(h.home), "turn/start") {
				t.Errorf("turn/start was sent: %v", fakeLog(h.home))
			}
		})
	}
}

// TestScriptedTurn: a verified turn with server requests (all declined),
// an unknown notification (warning) and a paginated all-disabled MCP list.
func TestScriptedTurn(t *testing.T) {
	dis := str("disabled")
	sc := scenario{ConfigServers: []string{"a", "b"},
		MCPPages: [][]statusEntry{{{Name: "a", RuntimeStatus: dis}}, {{Name: "b", RuntimeStatus: dis}}},
		ServerRequests: []json.RawMessage{
			json.RawMessage(`{"method":"item/commandExecution/requestApproval","params":{}}`),
			json.RawMessage(`{"method":"item/fileChange/requestApproval","params":{}}`),
			json.RawMessage(`{"method":"execCommandApproval","params":{}}`),
			json.RawMessage(`{"method":"mcpServer/elicitation/request","params":{}}`),
			json.RawMessage(`{"method":"item/tool/requestUserInput","params":{}}`),
		},
		TurnEvents: []json.RawMessage{
			note("some/futureThing", map[string]any{}),
			note("item/agentMessage/delta", map[string]any{"turnId": "turn-1", "itemId": "m1", "delta": "scripted "}),
			note("item/agentMessage/delta", map[string]any{"turnId": "turn-1", "itemId": "m1", "delta": "answer"}),
			agentMessageNote("scripted answer"),
		}}
	h := fakeHarness(t, sc)
	res, err := h.backend(Options{}).Run(context.Background(), h.turn("hello"))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Text != "scripted answer" || res.SessionID == "" || res.Model != testModel {
		t.Errorf("result = %+v", res)
	}
	log := strings.Join(fakeLog(h.home), "\n")
	for _, want := range []string{`resp:{"decision":"decline"}`, `"denied":{"rejection"`, `resp:{"action":"decline"}`, "resp:error"} {
		if !strings.Contains(log, want) {
			t.Errorf("fake log lacks %s:\n%s", want, log)
		}
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "some/futureThing") }) {
		t.Errorf("no warning for the unknown notification: %v", res.Warnings)
	}
}

// TestScriptedFailures types turn failures and profile breaches.
func TestScriptedFailures(t *testing.T) {
	tests := []struct {
		name   string
		events []json.RawMessage
		code   fault.Code
		reason string
		detail map[string]string
	}{
		{"usage limit keeps reset", []json.RawMessage{
			note("account/rateLimits/updated", map[string]any{"rateLimits": map[string]any{"primary": map[string]any{"usedPercent": 100, "resetsAt": 1800000000}}}),
			failed("usageLimitExceeded", "You've hit your usage limit.")},
			fault.RateLimited, "codex.usageLimitExceeded", map[string]string{"resetsAt": "2027-01-15T08:00:00Z"}},
		{"unauthorized", []json.RawMessage{failed("unauthorized", "401")}, fault.AuthRequired, "codex.unauthorized", nil},
		{"model not found", []json.RawMessage{failed("modelNotFound", "no such model")}, fault.ModelUnavailable, "codex.model_not_found", nil},
		{"http 429", []json.RawMessage{failed(map[string]any{"responseStreamConnectionFailed": map[string]any{"httpStatusCode": 429}}, "slow down")}, fault.RateLimited, "codex.http_429", nil},
		{"http 503", []json.RawMessage{failed(map[string]any{"httpConnectionFailed": map[string]any{"httpStatusCode": 503}}, "down")}, fault.ProcessError, "codex.http_503", nil},
		{"context window", []json.RawMessage{failed("contextWindowExceeded", "too long")}, fault.ProcessError, "codex.context_window", nil},
		{"unknown category", []json.RawMessage{failed("somethingNew", "??")}, fault.ProcessError, "codex.turn_failed", nil},
		{"no category", []json.RawMessage{failed(nil, "??")}, fault.ProcessError, "codex.turn_failed", nil},
		{"hook ran", []json.RawMessage{note("hook/started", map[string]any{})}, fault.SandboxUnavailable, ReasonHooks, nil},
		{"malformed known event", []json.RawMessage{json.RawMessage(`{"method":"turn/completed","params":{"turn":"nope"}}`)}, fault.ProtocolError, "codex.malformed_event", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fakeHarness(t, scenario{TurnEvents: tt.events})
			_, err := h.backend(Options{}).Run(context.Background(), h.turn("hello"))
			fe := wantFault(t, err, tt.code, tt.reason)
			for k, v := range tt.detail {
				if fe.Details[k] != v {
					t.Errorf("detail %s = %q, want %q", k, fe.Details[k], v)
				}
			}
		})
	}
}

// TestScriptedModelBinding: the thread's reported model and a reroute are
// checked against the consented model.
func TestScriptedModelBinding(t *testing.T) {
	t.Run("thread reports another model", func(t *testing.T) {
		h := fakeHarness(t, scenario{Model: "gpt-y"})
		turn := h.turn("hello")
		turn.Model = "gpt-x"
		_, err := h.backend(Options{}).Run(context.Background(), turn)
		wantFault(t, err, fault.PolicyDenied, "consent.model_mismatch")
		if slices.Contains(fakeLog(h.home), "turn/start") {
			t.Error("turn/start was sent")
		}
	})
	t.Run("reroute refused by hook", func(t *testing.T) {
		h := fakeHarness(t, scenario{TurnEvents: []json.RawMessage{
			note("model/rerouted", map[string]any{"fromModel": testModel, "toModel": "gpt-big", "reason": "x"}),
			agentMessageNote("from the other model")}})
		turn := h.turn("hello")
		var seen []string
		turn.CheckModel = func(m string) error {
			seen = append(seen, m)
			if m != testModel {
				return fault.New(fault.PolicyDenied, "consent.model_mismatch", "not consented")
			}
			return nil
		}
		_, err := h.backend(Options{}).Run(context.Background(), turn)
		wantFault(t, err, fault.PolicyDenied, "consent.model_mismatch")
		if want := []string{testModel, "gpt-big"}; !slices.Equal(seen, want) {
			t.Errorf("CheckModel saw %v, want %v", seen, want)
		}
	})
}

// TestScriptedExitMidTurn: streamed text then the app-server exits → the
// partial answer is discarded and the turn is PROCESS_ERROR.
func TestScriptedExitMidTurn(t *testing.T) {
	h := fakeHarness(t, scenario{ExitMidTurn: true, TurnEvents: []json.RawMessage{
		note("item/agentMessage/delta", map[string]any{"turnId": "turn-1", "itemId": "m1", "delta": "half an ans"})}})
	res, err := h.backend(Options{}).Run(context.Background(), h.turn("hello"))
	fe := wantFault(t, err, fault.ProcessError, "codex.exited")
	if res.Text != "" || !strings.Contains(fe.Details["partialAnswer"], "incomplete") {
		t.Errorf("partial answer leaked or unmarked: res=%+v details=%v", res, fe.Details)
	}
}

// TestScriptedCancel: cancelling a running turn interrupts it first and
// returns ABORTED.
func TestScriptedCancel(t *testing.T) {
	h := fakeHarness(t, scenario{HangTurn: true})
	ctx, cancel := context.WithCancel(context.Background())
	obs := &recorder{}
	turn := h.turn("hello")
	turn.Observer = obs
	go func() {
		for !slices.Contains(fakeLog(h.home), "turn/start") {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	_, err := h.backend(Options{}).Run(ctx, turn)
	wantFault(t, err, fault.Aborted, "turn.cancelled")
	if !slices.Contains(fakeLog(h.home), "turn/interrupt") {
		t.Errorf("no turn/interrupt sent: %v", fakeLog(h.home))
	}
}

// TestScriptedIdleTimeout: a silent turn ends with TIMEOUT.
func TestScriptedIdleTimeout(t *testing.T) {
	h := fakeHarness(t, scenario{HangTurn: true})
	turn := h.turn("hello")
	turn.IdleTimeout = 300 * time.Millisecond
	_, err := h.backend(Options{}).Run(context.Background(), turn)
	wantFault(t, err, fault.Timeout, "turn.idle")
}

// TestBadInput: refusals before any process starts.
func TestBadInput(t *testing.T) {
	t.Run("missing CLI", func(t *testing.T) {
		h := newHarness(t, "/nonexistent/codex", "")
		_, err := h.backend(Options{}).Run(context.Background(), h.turn("x"))
		if !fault.HasCode(err, fault.CLINotFound) {
			t.Fatalf("err = %v, want CLI_NOT_FOUND", err)
		}
	})
	t.Run("malformed TOML", func(t *testing.T) {
		h := fakeHarness(t, scenario{})
		body := providerTOML(h.double.URL()) + "\n[mcp_servers.x\ncommand = 1\n"
		h.writeConfig(body)
		_, err := h.backend(Options{}).Run(context.Background(), h.turn("x"))
		fe := wantFault(t, err, fault.SandboxUnavailable, "codex.config")
		if !strings.Contains(fe.Message, "~/config.toml") || !strings.Contains(fe.Message, "line 13") {
			t.Errorf("message does not name file and line: %q", fe.Message)
		}
		if got, _ := os.ReadFile(h.home + "/config.toml"); string(got) != body {
			t.Error("config.toml was modified")
		}
		if len(fakeLog(h.home)) != 0 {
			t.Errorf("a process was started: %v", fakeLog(h.home))
		}
	})
	t.Run("CODEX_HOME unreadable", func(t *testing.T) {
		h := fakeHarness(t, scenario{})
		notDir := h.home + "/config.toml" // a file, not a directory
		h.env = h.env.With("CODEX_HOME", notDir)
		_, err := h.backend(Options{}).Run(context.Background(), h.turn("x"))
		wantFault(t, err, fault.SandboxUnavailable, "codex.config")
	})
	for _, bad := range []adapter.Turn{{Model: "--yolo"}, {Effort: "turbo"}, {SessionID: "../etc"}} {
		h := &harness{env: config.FromList(nil)}
		b, _ := New(h.env, Options{})
		if _, err := b.Run(context.Background(), bad); err == nil {
			t.Errorf("Run(%+v) accepted", bad)
		}
	}
}
