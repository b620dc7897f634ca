package providertest

import (
	"encoding/json"
	"net/http"
	"testing"
)

// ToolUse scripts one assistant tool call of the Anthropic double: the
// model asks the client to run tool Name with Input (e.g. Claude Code's
// "Read" with {"file_path": "/abs/path"}).
type ToolUse struct {
	Name  string
	Input map[string]any
	// InputChunks splits the input JSON into this many input_json_delta
	// events (0 or 1 = one), as a real model streams it; it is cut at byte
	// offsets, so keep such input ASCII.
	InputChunks int
}

// NewAnthropicTools starts an Anthropic double that scripts one agent
// conversation: a Messages request that offers tools and already carries
// k tool results (tool_result blocks in its messages) is answered with
// tools[k] as one tool_use block (stop_reason "tool_use"); requests
// offering none, and those carrying len(tools) results or more, are
// answered from opts like [NewAnthropic]. It exists for end-to-end tests
// in which a real CLI must act (read, write, run) and send the result in
// its next request.
//
// The script position is read from the request, not kept as a counter:
// a request the client sent again (its answer cut off on the way) or a
// side request that repeats the conversation gets the same step again
// instead of consuming the next one, which the client would then never
// see (BenchmarkJobOverhead's 9-of-10-files failure in CI).
func NewAnthropicTools(t testing.TB, opts Options, tools ...ToolUse) *Anthropic {
	a := &Anthropic{}
	a.opts = opts
	mux := http.NewServeMux()
	mux.HandleFunc("HEAD /api/hello", a.hello)
	mux.HandleFunc("GET /api/hello", a.hello)
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		step, ok := scriptStep(r)
		if !ok || step >= len(tools) {
			a.messages(w, r)
			return
		}
		a.toolUse(w, r, tools[step])
	})
	mux.HandleFunc("POST /v1/messages/count_tokens", a.countTokens)
	mux.HandleFunc("/", a.notFound)
	a.start(t, mux)
	return a
}

// scriptStep reads r's body (and puts it back for the handler): ok is
// whether it offers the model any tool, and step how many tool results
// its messages carry. A client's side requests (a title, a quota probe)
// offer no tool and never act on a tool use, so a scripted one is not
// handed to them.
func scriptStep(r *http.Request) (step int, ok bool) {
	body, err := peekBody(r)
	if err != nil {
		return 0, false
	}
	var req struct {
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil || len(req.Tools) == 0 {
		return 0, false
	}
	for _, m := range req.Messages {
		var blocks []struct {
			Type string `json:"type"`
		}
		if m.Role != "user" || json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string content carries no tool result
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				step++
			}
		}
	}
	return step, true
}

// toolUse streams one tool_use content block.
func (a *Anthropic) toolUse(w http.ResponseWriter, r *http.Request, tu ToolUse) {
	rec, err := a.record(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req messageRequest
	json.Unmarshal(rec.Body, &req)
	input, _ := json.Marshal(tu.Input)
	usage := Reply{}.anthropicUsage(5)
	s := newSSE(w, Reply{})
	s.event("message_start", js(map[string]any{"type": "message_start",
		"message": message(a.model(req.Model), []any{}, nil, Reply{}.anthropicUsage(1))}))
	s.event("content_block_start", js(map[string]any{"type": "content_block_start", "index": 0,
		"content_block": map[string]any{"type": "tool_use", "id": newID("toolu_test"), "name": tu.Name, "input": map[string]any{}}}))
	n := max(tu.InputChunks, 1)
	for i := range n {
		part := input[len(input)*i/n : len(input)*(i+1)/n]
		s.event("content_block_delta", js(map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(part)}}))
	}
	s.event("content_block_stop", `{"type":"content_block_stop","index":0}`)
	s.event("message_delta", js(map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": "tool_use", "stop_sequence": nil}, "usage": usage}))
	s.event("message_stop", `{"type":"message_stop"}`)
	if s.err == nil {
		a.complete(rec)
	}
}
