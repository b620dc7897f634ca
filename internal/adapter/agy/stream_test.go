package agy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
)

// feed runs lines through a stream and finishes it with exit 0.
func feed(lines []string, stderr string) (adapter.Result, error) {
	s := newStream(adapter.Turn{}, invocation{})
	for _, l := range lines {
		if err := s.line([]byte(l)); err != nil {
			return adapter.Result{}, err
		}
	}
	return s.finish(0, stderr)
}

func TestDialects(t *testing.T) {
	tests := []struct {
		name     string
		lines    []string
		text     string
		warnings []string
	}{
		{"single JSON", []string{ev(map[string]any{"conversation_id": convID, "status": "SUCCESS", "response": "one shot"})}, "one shot", nil},
		{"legacy messages skip thoughts and users", []string{
			ev(map[string]any{"type": "init", "session_id": convID}),
			ev(map[string]any{"type": "message", "role": "user", "content": "PROMPT"}),
			ev(map[string]any{"type": "message", "role": "assistant", "content": "thinking…", "thought": true}),
			ev(map[string]any{"type": "message", "role": "assistant", "content": "Hel", "delta": true}),
			ev(map[string]any{"type": "message", "role": "assistant", "content": "lo", "delta": true}),
			ev(map[string]any{"type": "tool_use", "tool_name": "grep"}),
			ev(map[string]any{"type": "tool_result", "tool_name": "grep"}),
			ev(map[string]any{"type": "result", "result": map[string]any{"status": "SUCCESS", "stats": map[string]any{"inputTokens": 3}}}),
		}, "Hello", nil},
		{"deduplicated event ids", []string{initEv(),
			ev(map[string]any{"type": "step_update", "event_id": "e1", "step_update": map[string]any{"step_type": "agent_response", "step_index": 0, "text_delta": "a"}}),
			ev(map[string]any{"type": "step_update", "event_id": "e1", "step_update": map[string]any{"step_type": "agent_response", "step_index": 0, "text_delta": "a"}}),
			resultEv(convID, "SUCCESS", ""),
		}, "a", nil},
		{"warnings from notices and warning errors", []string{
			"warning: conversation abc not found, starting a new one",
			"jetski: sandbox ready",
			"some banner",
			initEv(),
			ev(map[string]any{"type": "error", "severity": "warning", "message": "slow"}),
			step(0, "thinking", "", "hmm", ""),
			resultEv(convID, "SUCCESS", "ok"),
		}, "ok", []string{"agy reported that the requested conversation was not found",
			"agy printed a tool-runtime (jetski) notice", "agy printed non-JSON output (ignored)",
			"agy reported a non-fatal warning", `agy sent an unknown step type "thinking" (ignored)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := feed(tt.lines, "")
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string{Limitation}, tt.warnings...)
			if res.Text != tt.text || !cmp.Equal(want, res.Warnings) {
				t.Errorf("Text %q Warnings %q; want %q %q", res.Text, res.Warnings, tt.text, want)
			}
		})
	}
}

func TestMalformedKnownEvents(t *testing.T) {
	for _, l := range []string{
		`{"type":"step_update"}`,
		`{"type":"step_update","step_update":{"step_type":"agent_response"}}`,
		`{"type":"message","role":"assistant"}`,
		`{"type":"result","result":"SUCCESS"}`,
		`{"type":"init","conversation_id":"not-a-uuid"}`,
		`{"type":"init","event_id":"bad id with spaces"}`,
	} {
		_, err := feed([]string{l}, "")
		if !fault.HasCode(err, fault.ProtocolError) {
			t.Errorf("%s: %v, want PROTOCOL_ERROR", l, err)
		}
	}
	_, err := feed([]string{initEv(), ev(map[string]any{"type": "init", "conversation_id": "11111111-2222-4333-8444-555555555555"})}, "")
	if fe := fault.From(err); fe == nil || fe.Reason != "agy.session_changed" {
		t.Errorf("session change mid-turn: %v", err)
	}
}

func TestBudgets(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	var lines []string
	for i := range 3 {
		lines = append(lines, step(i, "agent_response", "", big, ""))
	}
	if _, err := feed(lines, ""); !fault.HasCode(err, fault.BufferLimit) {
		t.Errorf("600 KiB answer: %v, want BUFFER_LIMIT", err)
	}
	lines = nil
	for i := range 51 {
		lines = append(lines, step(i, "tool", "ACTIVE", "", "t"))
	}
	if _, err := feed(lines, ""); !fault.HasCode(err, fault.BufferLimit) {
		t.Errorf("51 tools: %v, want BUFFER_LIMIT", err)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		text string
		code fault.Code
	}{
		{"RESOURCE_EXHAUSTED: try later", fault.RateLimited},
		{"Quota exceeded for model", fault.RateLimited},
		{"HTTP 429 Too Many Requests", fault.RateLimited},
		{"syntax error at line 429", fault.ProcessError},
		{"disk quota check failed", fault.ProcessError},
		{"conversation 1234 not found", fault.SessionInvalid},
		{"IneligibleTierError: upgrade", fault.AuthRequired},
		{"rpc error: code = Unauthenticated desc = x", fault.AuthRequired},
		{"rpc error: code = 16", fault.AuthRequired},
		{"status: 403", fault.AuthRequired},
		{"the author field is empty", fault.ProcessError},
		{"model gemini-9 not found", fault.ModelUnavailable},
		{"HTTP 404", fault.ModelUnavailable},
		{"tool auto-denied", fault.SandboxUnavailable},
		{"UNAVAILABLE: backend", fault.ProcessError},
		{"something odd", fault.ProcessError},
	}
	for _, tt := range tests {
		err := classify(tt.text)
		if !fault.HasCode(err, tt.code) {
			t.Errorf("classify(%q) = %v, want %s", tt.text, err, tt.code)
		}
		if strings.Contains(err.Error(), tt.text) {
			t.Errorf("classify(%q): raw text leaked into the public message", tt.text)
		}
	}
	if fe := fault.From(classify("UNAVAILABLE")); !fe.Retryable {
		t.Error("UNAVAILABLE not retryable")
	}
}

func TestModelEffort(t *testing.T) {
	tests := []struct{ model, effort, wantModel, wantEffort string }{
		{"gemini-3.8-flash-high", "low", "gemini-3.8-flash", "low"},
		{"gemini-3.8-flash-high", "", "gemini-3.8-flash-high", ""},
		{"gemini-3.8-flash", "max", "gemini-3.8-flash", "max"},
		{"", "medium", "", "medium"},
		{"-high", "low", "", ""}, // invalid model: error below
	}
	for _, tt := range tests[:4] {
		m, e, err := modelEffort(tt.model, tt.effort)
		if err != nil || m != tt.wantModel || e != tt.wantEffort {
			t.Errorf("modelEffort(%q,%q) = %q,%q,%v", tt.model, tt.effort, m, e, err)
		}
	}
	if _, _, err := modelEffort("-high", "low"); !fault.HasCode(err, fault.InvalidInput) {
		t.Errorf("model -high: %v", err)
	}
}

// TestArgvAlwaysSandboxed: every argv the builder can produce starts with
// --sandbox.
func TestArgvAlwaysSandboxed(t *testing.T) {
	for _, ws := range []string{"", "/w"} {
		for _, m := range []string{"", "m"} {
			for _, c := range []string{"", convID} {
				if a := argv(ws, m, "low", c, adapter.DefaultDeadline); a[0] != "--sandbox" {
					t.Errorf("argv = %v", a)
				}
			}
		}
	}
}

// TestNoIsolationClaim is the R-016 golden test: the limitation wording is
// present and nothing claims isolation or a guaranteed read-only boundary.
func TestNoIsolationClaim(t *testing.T) {
	d, _ := json.Marshal(New(config0(), Options{}).Doctor(context.Background(), ""))
	for _, s := range []string{Limitation, verified, string(d)} {
		low := strings.ToLower(s)
		for _, claim := range []string{"are isolated", "is isolated", "turns isolated", "read-only guaranteed", "guaranteed read-only", "fully sandboxed"} {
			if strings.Contains(low, claim) {
				t.Errorf("%q claims %q", s, claim)
			}
		}
	}
	if !strings.Contains(Limitation, "not isolated from the external MCP servers and plugins") {
		t.Errorf("Limitation lacks the wording: %q", Limitation)
	}
}
