package agy

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
)

const convID = "0f8fad5b-d9cb-469f-a165-70867728950e"

func initEv() string {
	return ev(map[string]any{"type": "init", "conversation_id": convID, "model": "gemini-3.8-flash"})
}

func step(idx int, typ, state, delta, tool string) string {
	return ev(map[string]any{"type": "step_update", "step_update": map[string]any{
		"step_type": typ, "step_index": idx, "state": state, "text_delta": delta, "tool_name": tool}})
}

func resultEv(id, status, response string) string {
	return ev(map[string]any{"type": "result", "result": map[string]any{
		"conversation_id": id, "status": status, "response": response, "denied_actions": []any{},
		"usage": map[string]any{"input_tokens": 120, "output_tokens": 7}}})
}

type recorder struct{ deltas, warnings []string }

func (r *recorder) Delta(s string)          { r.deltas = append(r.deltas, s) }
func (r *recorder) Activity(kind, n string) {}
func (r *recorder) Warning(s string)        { r.warnings = append(r.warnings, s) }

func run(t *testing.T, f *fake, turn adapter.Turn) (adapter.Result, error) {
	t.Helper()
	if turn.Workspace == "" {
		turn.Workspace = t.TempDir()
	}
	if turn.Prompt == "" {
		turn.Prompt = "explain main.go"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return New(f.env, Options{}).Run(ctx, turn)
}

func TestRunNormalAnswer(t *testing.T) {
	f := newFake(t, script{Stdout: []string{
		initEv(),
		step(0, "tool", "ACTIVE", "", "read_file"),
		step(0, "tool", "ACTIVE", "", "read_file"),
		step(0, "tool", "DONE", "", "read_file"),
		step(1, "agent_response", "ACTIVE", "The answer ", ""),
		step(1, "agent_response", "ACTIVE", "is 4.", ""),
		resultEv(convID, "SUCCESS", ""),
	}})
	ws := t.TempDir()
	rec := &recorder{}
	res, err := run(t, f, adapter.Turn{Workspace: ws, Prompt: "what is 2+2?", Model: "gemini-3.8-flash-high", Effort: "low", Observer: rec})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := adapter.Result{Text: "The answer is 4.", SessionID: convID, Model: "gemini-3.8-flash", ToolCount: 1,
		Usage: adapter.Usage{InputTokens: 120, OutputTokens: 7}, Warnings: []string{Limitation}, Verified: verified}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Result (-want +got):\n%s", diff)
	}
	if got := strings.Join(rec.deltas, ""); got != "The answer is 4." {
		t.Errorf("deltas = %q", got)
	}
	r, _ := f.recorded()
	wantArgs := []string{"--sandbox", "--output-format", "stream-json", "--add-dir", ws,
		"--model", "gemini-3.8-flash", "--effort", "low", "--print-timeout", "960s"}
	if diff := cmp.Diff(wantArgs, r.Args); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	if r.Stdin != "what is 2+2?" {
		t.Errorf("stdin = %q", r.Stdin)
	}
	if !slices.Contains(r.Env, "COAGENT8_TURN=1") || slices.ContainsFunc(r.Env, func(e string) bool { return strings.HasPrefix(e, "GEMINI_API_KEY=") }) {
		t.Errorf("env: want the nested-turn marker and no GEMINI_API_KEY: %v", r.Env)
	}
}

func TestRunResume(t *testing.T) {
	f := newFake(t, script{Stdout: []string{initEv(), step(0, "agent_response", "", "again", ""), resultEv(convID, "SUCCESS", "again")}})
	res, err := run(t, f, adapter.Turn{SessionID: convID})
	if err != nil || res.SessionID != convID || res.Text != "again" {
		t.Fatalf("resume: %+v %v", res, err)
	}
	r, _ := f.recorded()
	if i := slices.Index(r.Args, "--conversation"); i < 0 || r.Args[i+1] != convID || r.Args[0] != "--sandbox" {
		t.Errorf("argv = %v", r.Args)
	}

	other := "11111111-2222-4333-8444-555555555555"
	_, err = run(t, f, adapter.Turn{SessionID: other})
	if !fault.HasCode(err, fault.SessionInvalid) {
		t.Errorf("resume answered by another conversation: %v, want SESSION_INVALID", err)
	}
}

func TestRunUnknownEventTypeWarns(t *testing.T) {
	f := newFake(t, script{Stdout: []string{
		initEv(),
		ev(map[string]any{"event": "some_new_type", "x": 1}),
		ev(map[string]any{"event": "some_new_type", "x": 2}),
		step(0, "agent_response", "", "kept", ""),
		resultEv(convID, "SUCCESS", ""),
	}})
	rec := &recorder{}
	res, err := run(t, f, adapter.Turn{Observer: rec})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{Limitation, `agy sent an unknown event type "some_new_type" (ignored)`}
	if res.Text != "kept" || !cmp.Equal(want, res.Warnings) {
		t.Errorf("Text %q, Warnings %q; want %q", res.Text, res.Warnings, want)
	}
	if len(rec.warnings) != 1 {
		t.Errorf("observer warnings = %q, want one", rec.warnings)
	}
}

func TestRunFailures(t *testing.T) {
	tests := []struct {
		name   string
		s      script
		turn   adapter.Turn
		code   fault.Code
		reason string
		ran    bool
	}{
		{"exit 0 without terminal event", script{Stdout: []string{initEv(), step(0, "agent_response", "", "partial", "")}},
			adapter.Turn{}, fault.ProtocolError, "agy.no_result", true},
		{"sandbox denial on stderr", script{Stdout: []string{initEv(), resultEv(convID, "SUCCESS", "done")},
			Stderr: "jetski: tool run_command auto-denied by sandbox\n"}, adapter.Turn{}, fault.SandboxUnavailable, "agy.sandbox_denied", true},
		{"denied_actions", script{Stdout: []string{initEv(), ev(map[string]any{"type": "result", "result": map[string]any{
			"conversation_id": convID, "status": "SUCCESS", "response": "x", "denied_actions": []any{"write_file"}}})}},
			adapter.Turn{}, fault.SandboxUnavailable, "agy.sandbox_denied", true},
		{"rate limited", script{Stdout: []string{initEv(), ev(map[string]any{"type": "result", "result": map[string]any{
			"conversation_id": convID, "status": "ERROR", "error": "RESOURCE_EXHAUSTED: quota"}})}},
			adapter.Turn{}, fault.RateLimited, "agy.rate_limited", true},
		{"error event", script{Stdout: []string{initEv(), ev(map[string]any{"type": "error", "message": "Not logged in"})}},
			adapter.Turn{}, fault.AuthRequired, "agy.auth", true},
		{"empty answer", script{Stdout: []string{initEv(), resultEv(convID, "SUCCESS", "")}},
			adapter.Turn{}, fault.ProtocolError, "agy.empty_answer", true},
		{"no session id", script{Stdout: []string{step(0, "agent_response", "", "x", ""), resultEv("", "SUCCESS", "")}},
			adapter.Turn{}, fault.ProtocolError, "agy.no_session", true},
		{"duplicate result", script{Stdout: []string{initEv(), resultEv(convID, "SUCCESS", "a"), resultEv(convID, "SUCCESS", "b")}},
			adapter.Turn{}, fault.ProtocolError, "agy.duplicate_result", true},
		{"print timeout notice", script{Stdout: []string{initEv(), resultEv(convID, "SUCCESS", "half")},
			Stderr: "Print timeout reached after 5m0s\n"}, adapter.Turn{}, fault.Timeout, "agy.print_timeout", true},
		{"model --yolo rejected before argv", script{}, adapter.Turn{Model: "--yolo"}, fault.InvalidInput, "model.invalid", false},
		{"unsupported effort", script{}, adapter.Turn{Effort: "minimal"}, fault.CLIUnsupported, "agy.effort", false},
		{"resume id not a UUID", script{}, adapter.Turn{SessionID: "abc"}, fault.SessionInvalid, "agy.session_id", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.s)
			_, err := run(t, f, tt.turn)
			fe := fault.From(err)
			if err == nil || fe.Code != tt.code || fe.Reason != tt.reason {
				t.Fatalf("err = %#v, want %s %s", fe, tt.code, tt.reason)
			}
			if _, ran := f.recorded(); ran != tt.ran {
				t.Errorf("fake started = %v, want %v", ran, tt.ran)
			}
		})
	}
}

func TestRunCancelAndDeadline(t *testing.T) {
	f := newFake(t, script{Stdout: []string{initEv()}, SleepMs: 30000})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := New(f.env, Options{}).Run(ctx, adapter.Turn{Prompt: "x", Workspace: t.TempDir()})
	if !fault.HasCode(err, fault.Aborted) || time.Since(start) > 10*time.Second {
		t.Fatalf("cancelled run: %v after %v, want ABORTED promptly", err, time.Since(start))
	}
	_, err = New(f.env, Options{}).Run(context.Background(), adapter.Turn{Prompt: "x", Workspace: t.TempDir(), Deadline: 300 * time.Millisecond})
	if !fault.HasCode(err, fault.Timeout) {
		t.Fatalf("deadline: %v, want TIMEOUT", err)
	}
}
