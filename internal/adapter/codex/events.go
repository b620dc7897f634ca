package codex

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/adapter/jsonl"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
)

// toolItems are ThreadItem types that are tool activity (counted, and
// reported to the observer without content).
var toolItems = map[string]bool{
	"commandExecution": true, "fileChange": true, "mcpToolCall": true, "dynamicToolCall": true,
	"collabAgentToolCall": true, "subAgentActivity": true, "webSearch": true, "imageView": true,
	"imageGeneration": true, "sleep": true,
}

// quietNotes are known notifications with nothing for coagent8 to do.
var quietNotes = map[string]bool{
	"thread/started": true, "thread/status/changed": true, "turn/started": true,
	"mcpServer/startupStatus/updated": true, "remoteControl/status/changed": true,
	"thread/settings/updated": true, "turn/diff/updated": true, "turn/plan/updated": true,
	"item/plan/delta": true, "item/reasoning/summaryTextDelta": true, "item/reasoning/summaryPartAdded": true,
	"item/reasoning/textDelta": true, "serverRequest/resolved": true, "thread/name/updated": true,
	"thread/readState/changed": true, "skills/changed": true, "account/updated": true,
	"item/commandExecution/outputDelta": true, "item/fileChange/outputDelta": true,
	"item/fileChange/patchUpdated": true, "item/mcpToolCall/progress": true, "thread/compacted": true,
	"model/verification": true, "turn/moderationMetadata": true, "model/safetyBuffering/updated": true,
	"app/list/updated": true, "thread/queue/changed": true,
}

// message is one completed agentMessage item.
type agentMessage struct {
	text  string
	phase string
	// clipped: text is only the leading MaxAnswerBytes of the message
	// (its record was reduced, issue 19 item 6).
	clipped bool
}

// events is the [jsonrpc.Handler] of one app-server session: it
// accumulates the turn (answer, tools, usage, warnings), answers every
// server→client request with a refusal, and ends the wait on the terminal
// notification or on a profile breach. Safe for concurrent use.
type events struct {
	obs   adapter.Observer
	red   *redact.Redactor
	check func(model string) error

	mu        sync.Mutex
	turnID    string
	messages  []agentMessage
	partial   int // bytes of streamed deltas
	tools     int
	usage     adapter.Usage
	warnings  []string
	unknown   map[string]bool
	model     string
	lastErr   *turnError
	resetsAt  int64
	completed *turnCompleted
	cut       jsonl.Cut // how the notification being handled was reduced
	fatal     error
	done      chan struct{}
	closed    bool
}

func newEvents(obs adapter.Observer, home string, check func(string) error) *events {
	return &events{obs: obs, red: redact.NewDiagnostic(home), check: check,
		unknown: map[string]bool{}, done: make(chan struct{})}
}

// finish ends the wait (first call wins).
func (e *events) finish() {
	if !e.closed {
		e.closed = true
		close(e.done)
	}
}

// abort records a fatal error (profile breach) and ends the wait.
func (e *events) abort(err error) {
	if e.fatal == nil {
		e.fatal = err
	}
	e.finish()
}

func (e *events) warn(msg string) {
	msg, _ = e.red.Bound(msg, 512)
	e.warnings = append(e.warnings, msg)
	if e.obs != nil {
		e.obs.Warning(msg)
	}
}

// Notification implements jsonrpc.Handler. A known notification whose
// structure was cut cannot be trusted (a turn id, a status or a model may
// be among what was dropped): it stops the turn. One whose strings alone
// were clipped is handled; only an answer text is ever that long.
func (e *events) Notification(method string, params json.RawMessage, cut jsonl.Cut) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cut = cut
	if _, ok := noteHandlers[method]; ok && cut&jsonl.CutValues != 0 {
		e.abort(fault.New(fault.BufferLimit, "codex.record_limit", fmt.Sprintf(
			"Codex sent a %s notification too large to check (over %d bytes once its strings are clipped); the answer was discarded.",
			clip(method, 80), adapter.MaxReducedBytes)))
		return
	}
	if h, ok := noteHandlers[method]; ok {
		if err := h(e, params); err != nil {
			e.abort(fault.Wrap(fault.ProtocolError, "codex.malformed_event",
				"Codex sent a malformed "+method+" notification.", err))
		}
		return
	}
	if quietNotes[method] {
		return
	}
	if !e.unknown[method] {
		e.unknown[method] = true
		e.warn("codex: unknown notification " + clip(method, 80) + " ignored")
	}
}
