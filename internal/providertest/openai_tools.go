package providertest

import (
	"encoding/json"
	"net/http"
	"testing"
)

// FunctionCall scripts one model tool call of the OpenAI double: the
// function's name as the CLI declared it (Codex 0.169.0 declares
// "exec_command" with {"cmd": "..."}) and its JSON arguments.
type FunctionCall struct {
	Name      string
	Arguments map[string]any
	// Namespace, when set, is the tool namespace the CLI declared the
	// function in (Codex 0.169.0 puts an MCP server's tools in
	// "mcp__<server>").
	Namespace string
}

// NewOpenAITools starts a Responses API double that scripts one agent
// conversation: a request whose input already carries k function call
// outputs is answered with calls[k] as one function_call output item;
// requests carrying len(calls) outputs or more are answered from opts like
// [NewOpenAI]. It exists for end-to-end tests in which a real CLI must
// try to act (e.g. write a file) and report the result in its next
// request. As with [NewAnthropicTools], the script position is read from
// the request, so a request sent again gets the same step, not the next.
func NewOpenAITools(t testing.TB, opts Options, calls ...FunctionCall) *OpenAI {
	o := &OpenAI{}
	o.opts = opts
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) {
		if step := callStep(r); step < len(calls) {
			o.functionCall(w, r, calls[step])
			return
		}
		o.responses(w, r)
	})
	mux.HandleFunc("GET /v1/models", o.models)
	mux.HandleFunc("/", o.notFound)
	o.start(t, mux)
	return o
}

// callStep reads r's body (and puts it back for the handler) and counts
// the function_call_output items of its input.
func callStep(r *http.Request) int {
	body, err := peekBody(r)
	if err != nil {
		return 0
	}
	var req struct {
		Input json.RawMessage `json:"input"`
	}
	var items []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(body, &req) != nil || json.Unmarshal(req.Input, &items) != nil {
		return 0 // a plain string input carries no output
	}
	step := 0
	for _, it := range items {
		if it.Type == "function_call_output" {
			step++
		}
	}
	return step
}

// functionCall streams one function_call item and completes the response.
func (o *OpenAI) functionCall(w http.ResponseWriter, r *http.Request, c FunctionCall) {
	rec, err := o.record(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req messageRequest
	json.Unmarshal(rec.Body, &req)
	model := o.model(req.Model)
	args, _ := json.Marshal(c.Arguments)
	item := map[string]any{"id": newID("fc_test"), "type": "function_call", "status": "completed",
		"call_id": newID("call_test"), "name": c.Name, "arguments": string(args)}
	if c.Namespace != "" {
		item["namespace"] = c.Namespace
	}
	s := newSSE(w, Reply{})
	seq := 0
	ev := func(name string, m map[string]any) {
		m["type"], m["sequence_number"] = name, seq
		seq++
		s.event(name, js(m))
	}
	ev("response.created", map[string]any{"response": response(model, "in_progress", []any{}, Reply{})})
	ev("response.output_item.added", map[string]any{"output_index": 0, "item": item})
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	ev("response.completed", map[string]any{"response": response(model, "completed", []any{item}, Reply{})})
	if s.err == nil {
		o.complete(rec)
	}
}
