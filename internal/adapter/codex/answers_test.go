package codex

import (
	"context"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/adapter/codex/jsonrpc"
	"github.com/coagent8/coagent8/internal/adapter/jsonl"
	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/providertest"
)

// Issue 19 item 6: the pinned Codex CLI's answers past the old 512 KiB
// record limit complete; one past the answer bound is cut to it and says
// so, instead of "the app-server exited".
func TestLargeAnswers(t *testing.T) {
	line := "line of a long answer\n"
	for _, tt := range []struct {
		name      string
		size      int
		truncated bool
	}{
		{"600KB", 600 << 10, false},
		{"2MB", 2 << 20, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Repeat(line, tt.size/len(line)+1)[:tt.size]
			h := newHarness(t, clitest.Path(t, "codex"), "", providertest.Reply{Text: text, Chunks: 40})
			res, err := h.backend(Options{}).Run(context.Background(), h.turn("write a lot"))
			if err != nil {
				t.Fatalf("Run: %v (cause %v)", err, errorsCause(err))
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

// A notification whose structure was cut stops the turn (its turn id or
// status may be what was dropped); one whose answer text alone was
// clipped gives a truncated answer.
func TestReducedNotifications(t *testing.T) {
	e := newEvents(nil, "/home/u", nil)
	long := strings.Repeat("x", adapter.MaxAnswerBytes)
	e.Notification("item/completed", []byte(`{"item":{"type":"agentMessage","id":"i","text":"`+long+`"}}`), jsonl.CutStrings)
	if len(e.messages) != 1 || !e.messages[0].clipped || e.fatal != nil {
		t.Fatalf("messages %d, clipped %v, fatal %v", len(e.messages), len(e.messages) > 0 && e.messages[0].clipped, e.fatal)
	}
	e.Notification("item/completed", []byte(`{"item":{"type":"agentMessage","id":"j","text":"short"}}`), jsonl.CutStrings)
	if e.messages[1].clipped {
		t.Fatal("a short text in a clipped record counted as clipped")
	}
	e.Notification("turn/completed", []byte(`{"turn":{}}`), jsonl.CutValues)
	if fe := fault.From(e.fatal); fe == nil || fe.Code != fault.BufferLimit || fe.Reason != "codex.record_limit" {
		t.Fatalf("fatal = %v, want BUFFER_LIMIT codex.record_limit", e.fatal)
	}
}

// A response too long to read verbatim is never verified from its
// reduction.
func TestReducedResponseRefuses(t *testing.T) {
	err := (&session{}).rpcError("thread/start", &jsonrpc.RecordLimitError{Size: 600 << 10})
	if fe := fault.From(err); fe == nil || fe.Code != fault.BufferLimit || fe.Reason != "codex.record_limit" ||
		!strings.Contains(fe.Message, "thread/start") {
		t.Fatalf("err = %v, want BUFFER_LIMIT codex.record_limit naming the method", err)
	}
}
