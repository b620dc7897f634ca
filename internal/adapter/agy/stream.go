package agy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/process"
)

// Budgets (backends.md §3).
const (
	maxAnswerBytes  = 512 << 10
	maxMessageBytes = 256 << 10
	maxMessages     = 50
	maxTools        = 50
	maxEventIDs     = 10000
)

// eventID reports whether s matches ^[A-Za-z0-9._:/-]{1,128}$ (checked by
// hand: a compiled bounded repetition in a package variable costs every
// process start, issue 8 performance; ids_test.go checks the equivalence).
func eventID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && strings.IndexByte("._:/-", s[i]) < 0 {
			return false
		}
	}
	return true
}

// terminal is the one final event of a turn.
type terminal struct {
	status   string // SUCCESS, ERROR, or another status (incomplete)
	response string
	errText  string
	denied   int
}

// stream is the state of one turn's event stream.
type stream struct {
	t        adapter.Turn
	inv      invocation
	session  string
	model    string
	msgs     map[string]*strings.Builder
	order    []string
	bytes    int
	tools    int
	ids      map[string]bool
	warned   map[string]bool
	warnings []string
	final    *terminal
	usage    adapter.Usage
	errored  bool   // a non-warning error event arrived
	errText  string // its text, for classification only
	denial   bool   // sandbox-denial evidence on stdout
}

func newStream(t adapter.Turn, inv invocation) *stream {
	return &stream{t: t, inv: inv, msgs: map[string]*strings.Builder{}, ids: map[string]bool{},
		warned: map[string]bool{}, warnings: []string{Limitation}}
}

// consume reads stdout to EOF. It returns the first fatal error.
func (s *stream) consume(p *process.Proc) error {
	lines := process.NewLines(p.Stdout(), adapter.MaxRecordBytes)
	for {
		line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p.Touch()
		if err := s.line(line); err != nil {
			return err
		}
	}
}

func (s *stream) line(raw []byte) error {
	text := strings.TrimSpace(string(raw))
	if text == "" {
		return nil
	}
	if !strings.HasPrefix(text, "{") {
		s.plainLine(text)
		return nil
	}
	var ev map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &ev) != nil {
		s.warnOnce("unparsable", "agy printed an unparsable JSON line (ignored)")
		return nil
	}
	if dup, err := s.duplicate(ev); dup || err != nil {
		return err
	}
	return s.event(ev)
}

// plainLine handles agy's non-JSON lines: notices become warnings; their
// text is not copied (it may quote workspace content).
func (s *stream) plainLine(text string) {
	switch {
	case strings.HasPrefix(text, "warning: conversation") && strings.Contains(text, "not found"):
		s.warnOnce("conversation-not-found", "agy reported that the requested conversation was not found")
	case strings.HasPrefix(text, "jetski:"):
		s.denial = s.denial || deniedRE().MatchString(text)
		s.warnOnce("jetski", "agy printed a tool-runtime (jetski) notice")
	default:
		s.warnOnce("plain", "agy printed non-JSON output (ignored)")
	}
}

// duplicate reports whether the event's event_id was seen before. Ids are
// validated; past maxEventIDs new ids are no longer remembered (memory
// bound) but still validated.
func (s *stream) duplicate(ev map[string]json.RawMessage) (bool, error) {
	raw, ok := ev["event_id"]
	if !ok {
		return false, nil
	}
	var id string
	if json.Unmarshal(raw, &id) != nil || !eventID(id) {
		return false, protocol("agy.event_id", "agy sent an event with a malformed event_id.")
	}
	if s.ids[id] {
		return true, nil
	}
	if len(s.ids) < maxEventIDs {
		s.ids[id] = true
	}
	return false, nil
}

func (s *stream) event(ev map[string]json.RawMessage) error {
	typ := str(ev["event"])
	if typ == "" {
		typ = str(ev["type"])
	}
	switch typ {
	case "":
		if _, ok := ev["status"]; ok {
			return s.result(ev) // the single-JSON dialect
		}
		s.warnOnce("untyped", "agy sent an event without a type (ignored)")
		return nil
	case "init":
		return s.init(ev)
	case "step_update":
		return s.stepUpdate(ev)
	case "message":
		return s.message(ev)
	case "tool_use":
		return s.toolStart(str(ev["tool_name"]) + str(ev["name"]))
	case "tool_result":
		s.activity("tool_finished", str(ev["tool_name"])+str(ev["name"]))
		return nil
	case "error":
		return s.errorEvent(ev)
	case "result":
		var inner map[string]json.RawMessage
		if json.Unmarshal(ev["result"], &inner) != nil || inner == nil {
			return protocol("agy.result", "agy sent a malformed result event.")
		}
		return s.result(inner)
	}
	s.warnOnce("type:"+typ, fmt.Sprintf("agy sent an unknown event type %q (ignored)", bound(typ, 64)))
	return nil
}

func (s *stream) init(ev map[string]json.RawMessage) error {
	id := str(ev["conversation_id"])
	if id == "" {
		id = str(ev["session_id"])
	}
	if err := s.setSession(id); err != nil {
		return err
	}
	if m := str(ev["model"]); m != "" {
		s.model = m
		if s.t.CheckModel != nil {
			return s.t.CheckModel(m)
		}
	}
	return nil
}

// setSession records the conversation id; a change mid-turn is an error.
func (s *stream) setSession(id string) error {
	switch {
	case id == "":
		return nil
	case !adapter.IsUUID(id):
		return protocol("agy.session_id", "agy reported a malformed conversation id.")
	case s.session != "" && !strings.EqualFold(s.session, id):
		return protocol("agy.session_changed", "agy changed the conversation id during a turn.")
	}
	s.session = id
	return nil
}

func (s *stream) warnOnce(key, msg string) {
	if s.warned[key] {
		return
	}
	s.warned[key] = true
	s.warnings = append(s.warnings, msg)
	if s.t.Observer != nil {
		s.t.Observer.Warning(msg)
	}
}

func (s *stream) activity(kind, name string) {
	if s.t.Observer != nil {
		s.t.Observer.Activity(kind, name)
	}
}

func (s *stream) toolStart(name string) error {
	s.tools++
	if s.tools > maxTools {
		return fault.New(fault.BufferLimit, "agy.tool_budget", "agy exceeded the budget of 50 tool calls in one turn.")
	}
	s.activity("tool_started", name)
	return nil
}

// appendText adds answer text to message key within the budgets.
func (s *stream) appendText(key, text string, replace bool) error {
	b, ok := s.msgs[key]
	if !ok {
		if len(s.order) >= maxMessages {
			return fault.New(fault.BufferLimit, "agy.message_budget", "agy exceeded the budget of 50 messages in one turn.")
		}
		b = &strings.Builder{}
		s.msgs[key], s.order = b, append(s.order, key)
	}
	if replace {
		s.bytes -= b.Len()
		b.Reset()
	}
	if b.Len()+len(text) > maxMessageBytes || s.bytes+len(text) > maxAnswerBytes {
		return fault.New(fault.BufferLimit, "agy.answer_budget", "agy's answer exceeds the 512 KiB budget (256 KiB per message).")
	}
	b.WriteString(text)
	s.bytes += len(text)
	if s.t.Observer != nil && !replace {
		s.t.Observer.Delta(text)
	}
	return nil
}

func protocol(reason, msg string) error { return fault.New(fault.ProtocolError, reason, msg) }

// str returns a JSON string value, or "".
func str(raw json.RawMessage) string {
	var v string
	if raw == nil || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v
}

func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
