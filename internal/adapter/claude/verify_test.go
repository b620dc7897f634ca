package claude

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
)

const (
	goodInit = `{"type":"system","subtype":"init","session_id":"@sid","tools":["Glob","Grep","Read"],"mcp_servers":[],"model":"claude-sonnet-5-5","permissionMode":"dontAsk","plugins":[{"name":"p","path":"builtin"}],"claude_code_version":"2.1.328"}`
	delta    = `{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"partial"}}}`
	success  = `{"type":"result","subtype":"success","is_error":false,"result":"final answer","usage":{"input_tokens":3,"cache_read_input_tokens":2,"output_tokens":4},"total_cost_usd":0.01}`
)

func initWith(old, new string) string { return strings.Replace(goodInit, old, new, 1) }

func TestStartupReportMismatchRefusesAndKillsTree(t *testing.T) {
	tests := []struct {
		name, first string
	}{
		{"extra tool", initWith(`"Glob","Grep","Read"`, `"Bash","Glob","Grep","Read"`)},
		{"fewer tools", initWith(`"Glob","Grep","Read"`, `"Read"`)},
		{"mcp server", initWith(`"mcp_servers":[]`, `"mcp_servers":[{"name":"x","status":"connected"}]`)},
		{"missing mcp report", initWith(`"mcp_servers":[],`, ``)},
		{"other mode", initWith(`"dontAsk"`, `"default"`)},
		{"missing mode", initWith(`"permissionMode":"dontAsk",`, ``)},
		{"user plugin", initWith(`"path":"builtin"`, `"path":"/home/u/.claude/plugins/evil"`)},
		{"content before init", delta},
		{"text before init", "hello"},
		{"assistant first", `{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}`},
		{"ui notice with content", `{"type":"system","subtype":"ui_invalidate","event":"ui.render","text":"hello"}`},
		{"other system event", `{"type":"system","subtype":"status","status":"requesting"}`},
		// Issue 19 item 6: a report too long to keep whole is never
		// verified from its reduction.
		{"oversized report", initWith(`"model"`, `"pad":"`+strings.Repeat("x", adapter.MaxRecordBytes)+`","model"`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.first+"\n"+success+"\n@hang")
			res, err := f.backend.Run(context.Background(), adapter.Turn{Prompt: "q", Workspace: t.TempDir()})
			fe := fault.From(err)
			if fe == nil || fe.Code != fault.SandboxUnavailable || fe.Reason != "claude.startup_report" {
				t.Fatalf("err = %v, want SANDBOX_UNAVAILABLE claude.startup_report", err)
			}
			if res.Text != "" {
				t.Fatalf("answer returned: %q", res.Text)
			}
			assertNoSurvivor(t, f)
		})
	}
}

// assertNoSurvivor checks by pid that the fake is gone. The fake only
// writes its pid when it reaches @hang; refusals before that line kill it
// earlier, so both outcomes are checked.
func assertNoSurvivor(t *testing.T, f *fake) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, "pid"))
	if err != nil {
		return // killed before reaching @hang
	}
	pid, _ := strconv.Atoi(string(b))
	for i := 0; i < 200; i++ {
		if !alive(pid) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("fake CLI %d still running after refusal", pid)
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z'
}

func TestStreamOutcomes(t *testing.T) {
	tests := []struct {
		name, script string
		code         fault.Code
		reason       string
		text         string
	}{
		{"success", goodInit + "\n" + delta + "\n" + success, "", "", "final answer"},
		{"ui notice after init", goodInit + "\n" + `{"type":"system","subtype":"ui_invalidate","event":"ui.render","uuid":"u","session_id":"@sid"}` + "\n" + success, "", "", "final answer"},
		{"ui notice before init", `{"type":"system","subtype":"ui_invalidate","event":"ui.render","uuid":"u","session_id":"@sid"}` + "\n" + goodInit + "\n" + success, "", "", "final answer"},
		{"unknown event tolerated", goodInit + "\n" + `{"type":"brand_new","x":1}` + "\n" + success, "", "", "final answer"},
		{"malformed line", goodInit + "\n" + delta + "\n{not json\n" + success, fault.ProtocolError, "claude.malformed_event", ""},
		{"no result", goodInit + "\n" + delta, fault.ProcessError, "claude.no_result", ""},
		{"second init", goodInit + "\n" + goodInit + "\n" + success, fault.SandboxUnavailable, "claude.startup_report", ""},
		{"hook activity", goodInit + "\n" + `{"type":"system","subtype":"hook_started","hook_name":"x"}` + "\n" + success, fault.SandboxUnavailable, "claude.hook_activity", ""},
		{"auth failure", goodInit + "\n" + `{"type":"assistant","error":"authentication_failed","message":{"content":[{"type":"text","text":"Not logged in"}]}}` + "\n" + `{"type":"result","subtype":"success","is_error":true,"result":"Not logged in"}`, fault.AuthRequired, "claude.authentication_failed", ""},
		{"rate limit", goodInit + "\n" + `{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1790000000}}` + "\n" + `{"type":"result","subtype":"success","is_error":true,"api_error_status":429}`, fault.RateLimited, "claude.http_429", ""},
		{"model 404", goodInit + "\n" + `{"type":"result","subtype":"success","is_error":true,"api_error_status":404}`, fault.ModelUnavailable, "claude.http_404", ""},
		{"unknown session", goodInit + "\n" + `{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["No conversation found with session ID: x"]}`, fault.SessionInvalid, "claude.unknown_session", ""},
		{"unknown failure", goodInit + "\n" + `{"type":"result","subtype":"error_max_turns","is_error":true}`, fault.ProcessError, "claude.failed", ""},
		{"empty answer", goodInit + "\n" + `{"type":"result","subtype":"success","is_error":false,"result":"  "}`, fault.ProcessError, "claude.empty_answer", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.script)
			res, err := f.backend.Run(context.Background(), adapter.Turn{Prompt: "q", Workspace: t.TempDir()})
			if tt.code == "" {
				if err != nil || res.Text != tt.text {
					t.Fatalf("Run = %q, %v; want %q", res.Text, err, tt.text)
				}
				return
			}
			fe := fault.From(err)
			if fe == nil || fe.Code != tt.code || fe.Reason != tt.reason {
				t.Fatalf("err = %#v, want %s/%s", fe, tt.code, tt.reason)
			}
			if res.Text != "" {
				t.Fatalf("partial answer passed off: %q", res.Text)
			}
		})
	}
}

func TestUnknownEventWarnsOnce(t *testing.T) {
	unknown := `{"type":"brand_new"}`
	f := newFake(t, strings.Join([]string{goodInit, unknown, unknown, success}, "\n"))
	res, err := f.backend.Run(context.Background(), adapter.Turn{Prompt: "q", Workspace: t.TempDir()})
	if err != nil || len(res.Warnings) != 1 {
		t.Fatalf("warnings = %v, err %v; want exactly one", res.Warnings, err)
	}
}

func TestCancelAndTimeoutKillTheTree(t *testing.T) {
	f := newFake(t, goodInit+"\n"+delta+"\n@hang")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for !pidWritten(f) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err := f.backend.Run(ctx, adapter.Turn{Prompt: "q", Workspace: t.TempDir()})
	if !fault.HasCode(err, fault.Aborted) {
		t.Fatalf("err = %v, want ABORTED", err)
	}
	assertNoSurvivor(t, f)

	g := newFake(t, goodInit+"\n"+delta+"\n@hang")
	_, err = g.backend.Run(context.Background(), adapter.Turn{Prompt: "q", Workspace: t.TempDir(), Deadline: 500 * time.Millisecond})
	if !fault.HasCode(err, fault.Timeout) {
		t.Fatalf("err = %v, want TIMEOUT", err)
	}
	assertNoSurvivor(t, g)
}

func pidWritten(f *fake) bool { _, err := os.Stat(filepath.Join(f.dir, "pid")); return err == nil }

func TestCheckModelRefusesMismatch(t *testing.T) {
	f := newFake(t, goodInit+"\n"+success)
	var got string
	_, err := f.backend.Run(context.Background(), adapter.Turn{Prompt: "q", Workspace: t.TempDir(),
		CheckModel: func(m string) error {
			got = m
			return fault.New(fault.PolicyDenied, "consent.model_mismatch", "x")
		}})
	if !fault.HasCode(err, fault.PolicyDenied) || got != "claude-sonnet-5-5" {
		t.Fatalf("err = %v, reported %q", err, got)
	}
}
