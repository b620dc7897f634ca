package providertest

import (
	"bytes"
	"encoding/json"
	"io"
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

// NewAnthropicTools starts an Anthropic double whose first len(tools)
// Messages requests that offer tools are answered with one tool_use block
// each (stop_reason "tool_use"), in order; requests offering none and
// later requests are answered from opts like
// [NewAnthropic]. It exists for end-to-end tests in which a real CLI
// must read a file and send its content in the next request.
func NewAnthropicTools(t testing.TB, opts Options, tools ...ToolUse) *Anthropic {
	a := &Anthropic{}
	a.opts = opts
	pending := make(chan ToolUse, len(tools))
	for _, tu := range tools {
		pending <- tu
	}
	mux := http.NewServeMux()
	mux.HandleFunc("HEAD /api/hello", a.hello)
	mux.HandleFunc("GET /api/hello", a.hello)
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		if !offersTools(r) {
			a.messages(w, r)
			return
		}
		select {
		case tu := <-pending:
			a.toolUse(w, r, tu)
		default:
			a.messages(w, r)
		}
	})
	mux.HandleFunc("POST /v1/messages/count_tokens", a.countTokens)
	mux.HandleFunc("/", a.notFound)
	a.start(t, mux)
	return a
}

// offersTools reports whether r's body offers the model any tool. A
// client's side requests (a title, a quota probe) offer none and never
// act on a tool use, so a scripted one handed to them would be lost. The
// body is read and put back for the handler.
func offersTools(r *http.Request) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	var req struct {
		Tools []json.RawMessage `json:"tools"`
	}
	return json.Unmarshal(body, &req) == nil && len(req.Tools) > 0
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
