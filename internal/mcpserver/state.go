package mcpserver

import (
	"sync"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/turn"
)

// maxTracked bounds the per-handle turn numbers kept in memory.
const maxTracked = 1024

// toolState is what tools remember between calls of this process: the
// last failure (for the issue tool) and the last turn number seen per
// session handle (the REVIEW number of the next review in that session).
type toolState struct {
	mu      sync.Mutex
	lastErr error
	turns   map[string]int
}

func newToolState() *toolState { return &toolState{turns: map[string]int{}} }

// observe records a rendered outcome. Only the public parts of a failure
// are kept (code, reason, message): its cause never reached the outcome.
func (t *toolState) observe(o turn.Outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o.Error != nil {
		t.lastErr = fault.New(fault.Code(o.Error.Code), o.Error.Reason, o.Error.Message)
	}
	if o.SessionHandle != nil && o.Turn > 0 {
		if len(t.turns) >= maxTracked {
			clear(t.turns)
		}
		t.turns[*o.SessionHandle] = o.Turn
	}
}

// lastError returns the last failure rendered by this process, or nil.
func (t *toolState) lastError() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastErr
}

// nextReview is the REVIEW number of the next turn in handle's session:
// 1 for a new session, else one past the last turn this process saw (1
// when it saw none: the number labels the envelope, the gate never trusts
// it).
func (t *toolState) nextReview(handle string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.turns[handle] + 1
}
