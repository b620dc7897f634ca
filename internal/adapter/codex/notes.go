package codex

import (
	"encoding/json"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
)

// noteHandlers decode known notifications. A decode error of a known
// notification is a protocol error (AUD-P1-5: fail only on a malformed
// known event). They run with e.mu held.
var noteHandlers = map[string]func(*events, json.RawMessage) error{
	"item/agentMessage/delta":    (*events).onDelta,
	"item/started":               (*events).onItemStarted,
	"item/completed":             (*events).onItemCompleted,
	"thread/tokenUsage/updated":  (*events).onUsage,
	"model/rerouted":             (*events).onRerouted,
	"hook/started":               (*events).onHook,
	"hook/completed":             (*events).onHook,
	"error":                      (*events).onError,
	"turn/completed":             (*events).onCompleted,
	"warning":                    (*events).onWarning,
	"configWarning":              (*events).onWarning,
	"deprecationNotice":          (*events).onWarning,
	"guardianWarning":            (*events).onWarning,
	"account/rateLimits/updated": (*events).onRateLimits,
}

func (e *events) onDelta(p json.RawMessage) error {
	var d agentDelta
	if err := json.Unmarshal(p, &d); err != nil {
		return err
	}
	if e.turnID != "" && d.TurnID != e.turnID {
		return nil
	}
	e.partial += len(d.Delta)
	if e.obs != nil {
		e.obs.Delta(d.Delta)
	}
	return nil
}

func (e *events) onItemStarted(p json.RawMessage) error {
	var n itemNote
	if err := json.Unmarshal(p, &n); err != nil {
		return err
	}
	if toolItems[n.Item.Type] {
		e.tools++
		if e.obs != nil {
			e.obs.Activity("tool_started", n.Item.Type)
		}
	}
	return nil
}

func (e *events) onItemCompleted(p json.RawMessage) error {
	var n itemNote
	if err := json.Unmarshal(p, &n); err != nil {
		return err
	}
	switch {
	case n.Item.Type == "agentMessage" && (e.turnID == "" || n.TurnID == e.turnID):
		phase := ""
		if n.Item.Phase != nil {
			phase = *n.Item.Phase
		}
		e.messages = append(e.messages, agentMessage{text: n.Item.Text, phase: phase,
			clipped: e.cut.Clipped(n.Item.Text, adapter.RecordLimits())})
	case toolItems[n.Item.Type] && e.obs != nil:
		e.obs.Activity("tool_finished", n.Item.Type)
	}
	return nil
}

// onUsage sums the per-response "last" usage: "total" is the thread's
// running total and would count earlier turns of a resumed thread.
func (e *events) onUsage(p json.RawMessage) error {
	var n tokenUsageNote
	if err := json.Unmarshal(p, &n); err != nil {
		return err
	}
	e.usage.InputTokens += n.TokenUsage.Last.InputTokens
	e.usage.OutputTokens += n.TokenUsage.Last.OutputTokens
	return nil
}

// onRerouted records a model swap; consent for the old model does not
// cover the new one, so the check may stop the turn.
func (e *events) onRerouted(p json.RawMessage) error {
	var n rerouted
	if err := json.Unmarshal(p, &n); err != nil {
		return err
	}
	e.model = n.ToModel
	e.warn("codex: model rerouted from " + clip(n.FromModel, 64) + " to " + clip(n.ToModel, 64))
	if e.check != nil {
		if err := e.check(n.ToModel); err != nil {
			e.abort(err)
		}
	}
	return nil
}

// onHook: hooks are disabled in the profile; a hook running means the
// profile did not hold.
func (e *events) onHook(json.RawMessage) error {
	e.abort(fault.New(fault.SandboxUnavailable, ReasonHooks,
		"Codex ran a hook although hooks are disabled in the read-only profile; the turn was stopped."))
	return nil
}

func (e *events) onError(p json.RawMessage) error {
	var n errorNote
	if err := json.Unmarshal(p, &n); err != nil {
		return err
	}
	if n.WillRetry {
		e.warn("codex: retrying after: " + n.Error.Message)
		return nil
	}
	e.lastErr = &n.Error
	return nil
}

func (e *events) onCompleted(p json.RawMessage) error {
	var n turnCompleted
	if err := json.Unmarshal(p, &n); err != nil {
		return err
	}
	// One turn per process: the first terminal report wins. The turn id
	// may not be known yet (the response to turn/start and the first
	// events race on the caller's side).
	if e.completed != nil || (e.turnID != "" && n.Turn.ID != e.turnID) {
		return nil
	}
	e.completed = &n
	e.finish()
	return nil
}

func (e *events) onWarning(p json.RawMessage) error {
	var n struct {
		Message string `json:"message"`
		Summary string `json:"summary"`
	}
	if err := json.Unmarshal(p, &n); err != nil {
		return err
	}
	text := n.Summary
	if text == "" {
		text = n.Message
	}
	if text != "" {
		e.warn("codex: " + text)
	}
	return nil
}

func (e *events) onRateLimits(p json.RawMessage) error {
	var n struct {
		RateLimits struct {
			Primary *struct {
				ResetsAt *int64 `json:"resetsAt"`
			} `json:"primary"`
		} `json:"rateLimits"`
	}
	if err := json.Unmarshal(p, &n); err != nil {
		return err
	}
	if pr := n.RateLimits.Primary; pr != nil && pr.ResetsAt != nil {
		e.resetsAt = *pr.ResetsAt
	}
	return nil
}
