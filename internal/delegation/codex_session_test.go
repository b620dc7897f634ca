package delegation

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// fakeAppServer answers the session's requests the way Codex 0.169.0's
// app-server does, with thread/start's result replaced by thread, and
// records the methods it was sent.
func fakeAppServer(t *testing.T, s *codexSession, thread map[string]any, mcp []map[string]any) <-chan []string {
	return fakeAppServerTurn(t, s, thread, mcp, ourTurn("thread-1", "DONE"))
}

// ourTurn is what the app-server sends for a turn of thread id: its final
// agent message text and its completion (both name the thread, as
// Codex 0.169.0's ItemCompletedNotification and
// TurnCompletedNotification require).
func ourTurn(id, text string) []map[string]any {
	return []map[string]any{
		{"method": "item/completed", "params": map[string]any{"threadId": id, "turnId": "turn-1", "item": map[string]any{"type": "agentMessage", "text": text}}},
		{"method": "turn/completed", "params": map[string]any{"threadId": id, "turn": map[string]any{"id": "turn-1", "status": "completed"}}},
	}
}

// fakeAppServerTurn is fakeAppServer sending after (notifications) once
// it has answered turn/start.
func fakeAppServerTurn(t *testing.T, s *codexSession, thread map[string]any, mcp []map[string]any, after []map[string]any) <-chan []string {
	t.Helper()
	seen := make(chan []string, 1)
	go func() {
		var methods []string
		defer func() { seen <- methods }()
		sc := bufio.NewScanner(s.inR)
		w := json.NewEncoder(s.outW)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				return
			}
			methods = append(methods, m.Method)
			var result any
			switch m.Method {
			case "initialized":
				continue
			case "initialize":
				result = map[string]any{"userAgent": "coagent8/0.169.0 (Linux; x86_64) coagent8", "codexHome": "/job/scratch/.codex"}
			case "thread/start":
				result = thread
			case "mcpServerStatus/list":
				result = map[string]any{"data": mcp, "nextCursor": nil}
			case "turn/start":
				result = map[string]any{"turn": map[string]any{"id": "turn-1"}}
				_ = w.Encode(map[string]any{"id": m.ID, "result": result})
				for _, n := range after {
					_ = w.Encode(n)
				}
				continue
			}
			_ = w.Encode(map[string]any{"id": m.ID, "result": result})
		}
	}()
	return seen
}

func candidateThread(model string) map[string]any {
	return map[string]any{"sandbox": map[string]any{"type": "dangerFullAccess"}, "approvalPolicy": "never", "model": model,
		"modelProvider": "gate", "cwd": "/job/workspace", "thread": map[string]any{"id": "thread-1"}}
}

// TestCodexSessionVerifiesReport: the session starts the turn only after
// thread/start and the MCP status report exactly the candidate profile;
// any difference refuses with SANDBOX_UNAVAILABLE delegation.report, ends
// the job (stop) and never sends turn/start.
func TestCodexSessionVerifiesReport(t *testing.T) {
	const model = "gpt-5.1"
	with := func(k string, v any) map[string]any {
		th := candidateThread(model)
		th[k] = v
		return th
	}
	tests := []struct {
		name   string
		thread map[string]any
		mcp    []map[string]any
		ok     bool
	}{
		{"candidate profile", candidateThread(model), nil, true},
		{"a disabled MCP server", candidateThread(model), []map[string]any{{"name": "docs", "runtimeStatus": "disabled"}}, true},
		{"codex's own sandbox", with("sandbox", map[string]any{"type": "workspaceWrite", "networkAccess": false}), nil, false},
		{"read-only", with("sandbox", map[string]any{"type": "readOnly", "networkAccess": false}), nil, false},
		{"no sandbox", with("sandbox", nil), nil, false},
		{"approval on request", with("approvalPolicy", "on-request"), nil, false},
		{"granular approval", with("approvalPolicy", map[string]any{"granular": map[string]any{}}), nil, false},
		{"another model", with("model", "gpt-5.1-codex-max"), nil, false},
		{"another provider", with("modelProvider", "openai"), nil, false},
		{"another cwd", with("cwd", "/"), nil, false},
		{"no thread id", with("thread", map[string]any{}), nil, false},
		{"a started MCP server", candidateThread(model), []map[string]any{{"name": "docs", "runtimeStatus": "starting"}}, false},
		{"an MCP server without status", candidateThread(model), []map[string]any{{"name": "docs"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stopped := make(chan struct{})
			s := newCodexSession(model, "task", io.Discard, func() { close(stopped) })
			seen := fakeAppServer(t, s, tt.thread, tt.mcp)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s.drive(ctx)
			s.close()
			methods := <-seen
			rep, final, err := s.result()
			sentTurn := len(methods) > 0 && methods[len(methods)-1] == "turn/start"
			if tt.ok {
				if err != nil || !sentTurn || final != "DONE" || rep.Sandbox != CodexSandbox {
					t.Errorf("err %v, methods %v, final %q, report %+v: want the turn run", err, methods, final, rep)
				}
				return
			}
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != "delegation.report" {
				t.Errorf("err %v, want SANDBOX_UNAVAILABLE delegation.report", err)
			}
			if sentTurn {
				t.Errorf("turn/start was sent after a report that differs (methods %v)", methods)
			}
			select {
			case <-stopped:
			default:
				t.Errorf("the job was not stopped")
			}
		})
	}
}

// TestCodexSessionRefusesSecondThread: only the verified thread counts.
// A thread/started for another thread (one a config layer the agent
// wrote, or a subagent, started: its profile was never verified), or that
// thread's final message and turn end, refuses the job with
// SANDBOX_UNAVAILABLE delegation.report and stops it; before, the other
// thread's "completed" ended the session as a success with its message.
func TestCodexSessionRefusesSecondThread(t *testing.T) {
	const model = "gpt-5.1"
	started := func(id string) map[string]any {
		return map[string]any{"method": "thread/started", "params": map[string]any{"thread": map[string]any{"id": id}}}
	}
	tests := []struct {
		name  string
		after []map[string]any
	}{
		{"a second thread/started", append([]map[string]any{started("thread-2")}, ourTurn("thread-1", "DONE")...)},
		{"another thread's turn completes", ourTurn("thread-2", "DONE-2")},
		{"a turn end naming no thread", []map[string]any{{"method": "turn/completed", "params": map[string]any{"turn": map[string]any{"status": "completed"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stopped, once := make(chan struct{}), sync.Once{}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			// stop is the run's cancel in the runner: idempotent, and it
			// ends the session.
			s := newCodexSession(model, "task", io.Discard, func() { once.Do(func() { close(stopped) }); cancel() })
			seen := fakeAppServerTurn(t, s, candidateThread(model), nil, tt.after)
			s.drive(ctx)
			s.close()
			<-seen
			_, final, err := s.result()
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != "delegation.report" {
				t.Errorf("err %v (final %q), want SANDBOX_UNAVAILABLE delegation.report", err, final)
			}
			if final == "DONE-2" {
				t.Errorf("the other thread's message %q was kept as the job's", final)
			}
			select {
			case <-stopped:
			default:
				t.Errorf("the job was not stopped")
			}
		})
	}
}
