package claude

import (
	"context"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/providertest"
)

// bigAnswer is n bytes of lines, so its JSON form has escapes (\n).
func bigAnswer(n int) string {
	line := "line of a long answer\n"
	return strings.Repeat(line, n/len(line)+1)[:n]
}

// Issue 19 item 6: answers past the old 512 KiB record limit complete;
// one past the answer bound is cut to it and says so.
func TestRealCLILargeAnswers(t *testing.T) {
	for _, tt := range []struct {
		name      string
		size      int
		truncated bool
	}{
		{"600KB", 600 << 10, false},
		{"2MB", 2 << 20, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text := bigAnswer(tt.size)
			dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: text, Chunks: 40}})
			b := New(realEnv(t, dbl.URL(), true), Options{APIKeyBilling: true})
			res, err := b.Run(context.Background(), adapter.Turn{Prompt: "write a lot", Workspace: t.TempDir()})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			want := text
			if tt.truncated {
				want = text[:adapter.MaxAnswerBytes]
			}
			if res.Truncated != tt.truncated || len(res.Text) != len(want) || res.Text != want {
				t.Fatalf("Truncated = %v, Text %d bytes; want %v, %d bytes (a prefix of the answer)",
					res.Truncated, len(res.Text), tt.truncated, len(want))
			}
		})
	}
}

// Issue 19 item 7: a provider that answers with another model than the
// startup report's is refused, from the first record that says so.
func TestRealCLIModelSwapIsRefused(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Model: "claude-opus-4.7",
		Default: providertest.Reply{Text: "answer from another model", Chunks: 3}})
	b := New(realEnv(t, dbl.URL(), true), Options{APIKeyBilling: true})
	res, err := b.Run(context.Background(), adapter.Turn{Prompt: "hi", Model: "claude-sonnet-5-5", Workspace: t.TempDir()})
	if !fault.HasCode(err, fault.PolicyDenied) || fault.From(err).Reason != "consent.model_mismatch" {
		t.Fatalf("err = %v, want POLICY_DENIED consent.model_mismatch", err)
	}
	if res.Text != "" || !strings.Contains(err.Error(), `"claude-opus-4.7"`) {
		t.Fatalf("text %q, err %v", res.Text, err)
	}
}

// assistantWith is an assistant record whose provider reported model.
func assistantWith(model string) string {
	return `{"type":"assistant","message":{"model":"` + model + `","content":[{"type":"text","text":"final answer"}]}}`
}

func TestRecordModelsAreChecked(t *testing.T) {
	start := `{"type":"stream_event","event":{"type":"message_start","message":{"model":"claude-opus-4.7","content":[]}}}`
	tests := []struct {
		name, records string
		refused       bool
	}{
		{"same model", assistantWith("claude-sonnet-5-5"), false},
		{"same model, other case", assistantWith("Claude-Sonnet-5-5"), false},
		{"made up by the CLI", assistantWith("<synthetic>"), false},
		{"no model", `{"type":"assistant","message":{"content":[]}}`, false},
		{"assistant swap", assistantWith("claude-opus-4.7"), true},
		{"message_start swap", start, true},
		// Only the CLI makes up <synthetic> messages, never streamed: a
		// provider event saying it, or naming no model, is not exempt.
		{"message_start synthetic", strings.Replace(start, "claude-opus-4.7", "<synthetic>", 1), true},
		{"message_start without model", strings.Replace(start, `"model":"claude-opus-4.7",`, "", 1), true},
		{"message_start same model", strings.Replace(start, "claude-opus-4.7", "claude-sonnet-5-5", 1), false},
		{"hostile id", assistantWith(`x\" --yolo`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, goodInit+"\n"+tt.records+"\n"+success+"\n")
			res, err := f.backend.Run(context.Background(), adapter.Turn{Prompt: "q", Workspace: t.TempDir()})
			if !tt.refused {
				if err != nil || res.Text != "final answer" {
					t.Fatalf("Run = %q, %v; want the answer", res.Text, err)
				}
				return
			}
			if fe := fault.From(err); fe == nil || fe.Code != fault.PolicyDenied || fe.Reason != "consent.model_mismatch" || res.Text != "" {
				t.Fatalf("Run = %q, %v; want POLICY_DENIED consent.model_mismatch", res.Text, err)
			}
		})
	}
}

// A record whose structure outgrows the reduction budget cannot be
// checked: the turn fails closed, naming the record; a tool result of
// that size is only skipped.
func TestRecordTooLargeToCheck(t *testing.T) {
	huge := "[" + strings.Repeat("0,", adapter.MaxReducedBytes/2+1) + "0]"
	for _, tt := range []struct {
		name, record string
		want         fault.Code
	}{
		{"result", `{"type":"result","subtype":"success","pad":` + huge + `,"is_error":true,"result":"x"}`, fault.BufferLimit},
		{"tool result", `{"type":"user","message":{"content":[]},"tool_use_result":` + huge + `}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, goodInit+"\n"+tt.record+"\n"+success+"\n")
			_, err := f.backend.Run(context.Background(), adapter.Turn{Prompt: "q", Workspace: t.TempDir()})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("err = %v, want the answer", err)
				}
				return
			}
			if fe := fault.From(err); fe == nil || fe.Code != tt.want || fe.Reason != "claude.record_limit" {
				t.Fatalf("err = %v, want %s claude.record_limit", err, tt.want)
			}
		})
	}
}
