// Package event records security events: every refusal, verification result
// and policy decision (issue 2 §7, requirements §1.20).
//
// A record holds a type, a time, a reason and identifiers — never prompt or
// answer text. Records are redacted with the diagnostic profile before they
// are written, so a reason that quotes an error cannot leak a credential.
//
// The [Sink] seam is deliberately small: a JSON-lines file today; a
// queryable store can implement the same interface later.
package event

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/redact"
)

// Type names a kind of security event.
type Type string

// Event types. Later issues add more; keep names dotted and stable.
const (
	TypeRefusal      Type = "refusal"
	TypeVerification Type = "verification"
	TypeDecision     Type = "decision"
	TypeExecution    Type = "execution" // a sandboxed run ended (receipt summary)
)

// Event is one security record. Fields carry identifiers and reasons only.
type Event struct {
	Type    Type              `json:"type"`
	Time    time.Time         `json:"time"`
	Code    string            `json:"code,omitempty"`
	Reason  string            `json:"reason"`
	Backend string            `json:"backend,omitempty"`
	Model   string            `json:"model,omitempty"`
	Rule    string            `json:"rule,omitempty"`
	IDs     map[string]string `json:"ids,omitempty"`
	Detail  string            `json:"detail,omitempty"`
}

// Sink receives security events. Implementations must be safe for
// concurrent use and must not block a turn for long.
type Sink interface {
	Record(Event) error
}

// Discard is a Sink that drops events (tests, and refusal-only paths).
type Discard struct{}

// Record drops e.
func (Discard) Record(Event) error { return nil }

// FileSink appends JSON lines to a file (mode 0600) after redaction.
type FileSink struct {
	mu  sync.Mutex
	f   *os.File
	red *redact.Redactor
	now func() time.Time
}

// OpenFile opens (creating if needed) path for appending. The parent
// directory is created with mode 0700.
func OpenFile(path string, red *redact.Redactor) (*FileSink, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create event directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open event log: %w", err)
	}
	return &FileSink{f: f, red: red, now: time.Now}, nil
}

// Record writes e as one redacted JSON line. A zero Time is set to now.
func (s *FileSink) Record(e Event) error {
	if e.Time.IsZero() {
		e.Time = s.now().UTC()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	line := s.red.String(string(b)) + "\n"
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = s.f.WriteString(line)
	return err
}

// Close closes the file.
func (s *FileSink) Close() error { return s.f.Close() }

// Memory is a Sink that keeps events in memory (tests, doctor's last error).
type Memory struct {
	mu     sync.Mutex
	events []Event
}

// Record appends e.
func (m *Memory) Record(e Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, e)
	return nil
}

// Events returns a copy of the recorded events.
func (m *Memory) Events() []Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Event(nil), m.events...)
}

// Multi fans an event out to several sinks; the first error is returned.
type Multi []Sink

// Record records e in every sink.
func (m Multi) Record(e Event) error {
	var first error
	for _, s := range m {
		if err := s.Record(e); err != nil && first == nil {
			first = err
		}
	}
	return first
}
