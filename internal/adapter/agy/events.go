package agy

import (
	"encoding/json"
	"fmt"
	"strings"
)

// stepUpdate handles {step_update:{step_type, step_index, state,
// text_delta, tool_name|tool_info.name, usage}}.
func (s *stream) stepUpdate(ev map[string]json.RawMessage) error {
	var su struct {
		StepType  string                `json:"step_type"`
		StepIndex *int                  `json:"step_index"`
		State     string                `json:"state"`
		TextDelta string                `json:"text_delta"`
		ToolName  string                `json:"tool_name"`
		ToolInfo  struct{ Name string } `json:"tool_info"`
		Usage     json.RawMessage       `json:"usage"`
	}
	if ev["step_update"] == nil || json.Unmarshal(ev["step_update"], &su) != nil || su.StepIndex == nil {
		return protocol("agy.step_update", "agy sent a malformed step_update event.")
	}
	s.addUsage(su.Usage)
	key := fmt.Sprintf("msg-%d", *su.StepIndex)
	switch strings.ToLower(su.StepType) {
	case "agent_response":
		if su.TextDelta == "" {
			return nil
		}
		return s.appendText(key, su.TextDelta, false)
	case "tool":
		return s.toolStep(key, su.State, su.ToolName+su.ToolInfo.Name)
	}
	s.warnOnce("step:"+su.StepType, fmt.Sprintf("agy sent an unknown step type %q (ignored)", bound(su.StepType, 64)))
	return nil
}

// toolStep counts a tool once per step (several ACTIVE updates may come).
func (s *stream) toolStep(key, state, name string) error {
	switch strings.ToUpper(state) {
	case "ACTIVE":
		if s.warned["tool:"+key] {
			return nil
		}
		s.warned["tool:"+key] = true
		return s.toolStart(name)
	case "DONE", "ERROR":
		s.activity("tool_finished", name)
	}
	return nil
}

// message handles the legacy {role, content, delta, thought|reasoning}.
func (s *stream) message(ev map[string]json.RawMessage) error {
	var m struct {
		Role      string          `json:"role"`
		Content   *string         `json:"content"`
		Delta     bool            `json:"delta"`
		Thought   json.RawMessage `json:"thought"`
		Reasoning json.RawMessage `json:"reasoning"`
	}
	raw, _ := json.Marshal(ev)
	if json.Unmarshal(raw, &m) != nil || m.Content == nil {
		return protocol("agy.message", "agy sent a malformed message event.")
	}
	if truthy(m.Thought) || truthy(m.Reasoning) || (m.Role != "" && m.Role != "assistant" && m.Role != "model") {
		return nil // thinking and user echoes are not the answer
	}
	if !m.Delta || len(s.order) == 0 || !strings.HasPrefix(s.order[len(s.order)-1], "legacy-") {
		return s.appendText(fmt.Sprintf("legacy-%d", len(s.order)), *m.Content, false)
	}
	return s.appendText(s.order[len(s.order)-1], *m.Content, false)
}

func truthy(raw json.RawMessage) bool {
	v := strings.TrimSpace(string(raw))
	return v != "" && v != "false" && v != "null" && v != `""`
}

// errorEvent: severity "warning" is a warning; anything else ends the turn.
func (s *stream) errorEvent(ev map[string]json.RawMessage) error {
	if strings.EqualFold(str(ev["severity"]), "warning") {
		s.warnOnce("error-warning", "agy reported a non-fatal warning")
		return nil
	}
	s.errored = true
	s.errText = strings.TrimSpace(str(ev["message"]) + " " + errText(ev["error"]))
	return nil
}

// result handles the terminal result (wrapped or the single-JSON dialect).
func (s *stream) result(r map[string]json.RawMessage) error {
	if s.final != nil {
		return protocol("agy.duplicate_result", "agy sent more than one result event.")
	}
	if err := s.setSession(str(r["conversation_id"])); err != nil {
		return err
	}
	var denied []json.RawMessage
	if raw := r["denied_actions"]; raw != nil && string(raw) != "null" {
		if json.Unmarshal(raw, &denied) != nil {
			return protocol("agy.result", "agy sent a malformed result event.")
		}
	}
	s.final = &terminal{status: strings.ToUpper(str(r["status"])), response: str(r["response"]),
		errText: errText(r["error"]), denied: len(denied)}
	if r["usage"] != nil {
		s.addUsage(r["usage"])
	} else {
		s.addUsage(r["stats"])
	}
	return nil
}

// errText reads an error given as a string or an object with a message.
func errText(raw json.RawMessage) string {
	if v := str(raw); v != "" {
		return v
	}
	var o struct {
		Message string `json:"message"`
		Code    any    `json:"code"`
		Status  string `json:"status"`
	}
	if raw == nil || json.Unmarshal(raw, &o) != nil {
		return ""
	}
	return strings.TrimSpace(fmt.Sprintf("%s %v %s", o.Status, orEmpty(o.Code), o.Message))
}

func orEmpty(v any) any {
	if v == nil {
		return ""
	}
	if f, ok := v.(float64); ok {
		return fmt.Sprintf("code = %d", int(f))
	}
	return v
}

// usageKeys are the token-count names agy dialects use.
var usageKeys = map[string][]string{
	"in":  {"input_tokens", "inputTokens", "prompt_tokens", "promptTokenCount", "input"},
	"out": {"output_tokens", "outputTokens", "candidates_tokens", "candidatesTokenCount", "output"},
}

// addUsage keeps the largest counts seen (agy reports running totals).
func (s *stream) addUsage(raw json.RawMessage) {
	var m map[string]any
	if raw == nil || json.Unmarshal(raw, &m) != nil {
		return
	}
	s.usage.InputTokens = max(s.usage.InputTokens, pick(m, usageKeys["in"]))
	s.usage.OutputTokens = max(s.usage.OutputTokens, pick(m, usageKeys["out"]))
}

func pick(m map[string]any, keys []string) int64 {
	for _, k := range keys {
		if f, ok := m[k].(float64); ok && f >= 0 {
			return int64(f)
		}
	}
	return 0
}
