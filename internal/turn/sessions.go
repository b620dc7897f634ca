package turn

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"

	"github.com/coagent8/coagent8/internal/fault"
)

// Sessions binds opaque session handles to backend-native sessions and
// holds the per-session turn lease. Implementations: [Memory] here; the
// durable SQLite store in package session.
type Sessions interface {
	// Begin starts a turn. With Handle "" a session is created per Mode
	// ("none" keeps none). A given handle must belong to the same workspace
	// and backend (else SESSION_INVALID, revealing nothing about other
	// workspaces) and be idle (else SESSION_BUSY at once).
	Begin(ctx context.Context, b Begin) (Lease, error)
}

// Begin describes the turn about to start.
type Begin struct {
	Handle    string
	Workspace string
	Backend   string
	Mode      string // new | auto | none ("" = new)
	Model     string
	// Prompt is the turn's prompt text (kept as history by durable stores).
	Prompt string
	// Cancel ends the turn: it cancels the context the backend runs under,
	// which tears the process tree down. Stores call it from the cancel
	// tool (any connection) and may keep it until End. May be nil.
	Cancel context.CancelCauseFunc
}

// Lease is one turn's exclusive hold on a session.
type Lease interface {
	// Handle is the opaque session handle ("" when Mode is none).
	Handle() string
	// NativeID is the backend's own session id to resume ("" = new).
	NativeID() string
	// Turn is this turn's 1-based number in the session.
	Turn() int
	// Delta records streamed answer text (history). It never blocks long
	// and never fails the turn.
	Delta(text string)
	// End records the outcome and releases the lease. A storage failure is
	// returned as a warning string, never as a turn failure (AUD-P1-3).
	End(ctx context.Context, e End) (warning string)
}

// End is what a finished turn records.
type End struct {
	NativeID string
	Model    string
	Status   Status
	Output   string // redacted answer
	ErrCode  string
	Reason   string
}

// Memory is an in-process [Sessions] (no history, lost on exit).
type Memory struct {
	mu   sync.Mutex
	byID map[string]*memSession
}

type memSession struct {
	workspace, backend, native string
	turns                      int
	busy                       bool
}

// NewMemory returns an empty in-memory session table.
func NewMemory() *Memory { return &Memory{byID: map[string]*memSession{}} }

// Begin implements [Sessions].
func (m *Memory) Begin(_ context.Context, b Begin) (Lease, error) {
	if b.Mode == "none" && b.Handle == "" {
		return &memLease{}, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if b.Handle == "" {
		h := NewHandle()
		m.byID[h] = &memSession{workspace: b.Workspace, backend: b.Backend}
		b.Handle = h
	}
	s, ok := m.byID[b.Handle]
	if !ok || s.workspace != b.Workspace || s.backend != b.Backend {
		return nil, fault.New(fault.SessionInvalid, "session.unknown", "Unknown or expired session handle.")
	}
	if s.busy {
		return nil, fault.New(fault.SessionBusy, "session.busy", "The session is running another turn.")
	}
	s.busy = true
	s.turns++
	return &memLease{m: m, handle: b.Handle, native: s.native, turn: s.turns}, nil
}

type memLease struct {
	m      *Memory
	handle string
	native string
	turn   int
}

func (l *memLease) Handle() string   { return l.handle }
func (l *memLease) NativeID() string { return l.native }
func (l *memLease) Turn() int        { return l.turn }
func (l *memLease) Delta(string)     {}

func (l *memLease) End(_ context.Context, e End) string {
	if l.m == nil {
		return ""
	}
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	s := l.m.byID[l.handle]
	s.busy = false
	if e.NativeID != "" {
		s.native = e.NativeID
	}
	return ""
}

// NewHandle returns a fresh opaque handle: "syn_sess_" + 24 hex
// (contract.md §6).
func NewHandle() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "syn_sess_" + hex.EncodeToString(b[:])
}
