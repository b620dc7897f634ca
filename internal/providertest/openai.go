package providertest

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// OpenAI is a local double of the OpenAI Responses API. Point Codex at it
// with a custom model provider whose base_url is [OpenAI.URL]+"/v1" and
// wire_api = "responses". Its methods are safe for concurrent use; it is
// closed by t.Cleanup.
type OpenAI struct {
	double
}

// NewOpenAI starts a Responses API double on 127.0.0.1 answering with opts.
func NewOpenAI(t testing.TB, opts Options) *OpenAI {
	o := &OpenAI{}
	o.opts = opts
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", o.responses)
	mux.HandleFunc("GET /v1/models", o.models)
	mux.HandleFunc("/", o.notFound)
	o.start(t, mux)
	return o
}

func (o *OpenAI) notFound(w http.ResponseWriter, r *http.Request) {
	o.record(r)
	http.Error(w, `{"error":{"type":"invalid_request_error","message":"not found"}}`, http.StatusNotFound)
}

// models answers the model listing with an empty list, so Codex keeps its
// bundled catalog.
func (o *OpenAI) models(w http.ResponseWriter, r *http.Request) {
	o.record(r)
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"object":"list","data":[],"models":[]}`))
}

func (o *OpenAI) responses(w http.ResponseWriter, r *http.Request) {
	rec, err := o.record(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req messageRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	rep := o.reply()
	if rep.DropBeforeAnswer {
		hangUp(w)
		return
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		writeError(w, rep, rec)
		return
	}
	model := o.model(req.Model)
	cred := rec.Credential()
	echoHead(w, rep, cred)
	defer echoTail(w, rep, cred)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(response(model, "completed", []any{outputMessage(rep.text(), "completed")}, rep))
		o.complete(rec)
		return
	}
	o.streaming(1)
	defer o.streaming(-1)
	if o.stream(w, rep, model, cred) {
		o.complete(rec)
	}
}

// openAIUsage builds the Responses usage object; cached tokens are a subset
// of input tokens and reasoning tokens a subset of output (notes/gate.md §3).
func (rep Reply) openAIUsage() map[string]any {
	in, out := rep.usage()
	in += rep.CacheReadInputTokens
	return map[string]any{"input_tokens": in,
		"input_tokens_details":  map[string]any{"cached_tokens": rep.CacheReadInputTokens},
		"output_tokens":         out,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          in + out}
}

func response(model, status string, output []any, rep Reply) map[string]any {
	m := map[string]any{"id": "resp_test01", "object": "response", "created_at": time.Now().Unix(),
		"status": status, "model": model, "output": output}
	if status == "completed" && !rep.NoUsage {
		m["usage"] = rep.openAIUsage()
	}
	return m
}

func outputMessage(text, status string) map[string]any {
	content := []any{}
	if status == "completed" {
		content = []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}
	}
	return map[string]any{"id": "msg_test01", "type": "message", "status": status,
		"role": "assistant", "content": content}
}

// obfuscation is the padding the Responses API adds to a delta event so
// that its length does not tell the delta's.
func obfuscation(delta string) string { return "pad0123456789abcdef"[:3+len(delta)%16] }

// stream writes the Responses SSE answer and reports whether every event
// was written. There is no "data: [DONE]" in this API.
func (o *OpenAI) stream(w http.ResponseWriter, rep Reply, model, cred string) bool {
	s := newSSE(w, rep)
	seq := 0
	ev := func(name string, m map[string]any) {
		m["type"], m["sequence_number"] = name, seq
		seq++
		s.event(name, js(m))
	}
	ev("response.created", map[string]any{"response": response(model, "in_progress", []any{}, rep)})
	ev("response.output_item.added", map[string]any{"output_index": 0, "item": outputMessage("", "in_progress")})
	for i, d := range rep.deltas() {
		if i == 1 && o.echoEnd(ev, rep, model, cred) {
			return s.err == nil
		}
		if rep.Echo == EchoText && i == 0 {
			d += " " + cred
		}
		// logprobs and obfuscation as the real API sends them (the
		// padding evens out the event's length; the client ignores it).
		ev("response.output_text.delta", map[string]any{"item_id": "msg_test01", "output_index": 0,
			"content_index": 0, "delta": d, "logprobs": []any{}, "obfuscation": obfuscation(d)})
	}
	if rep.Truncate {
		return s.err == nil
	}
	done := outputMessage(rep.text(), "completed")
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": done})
	ev("response.completed", map[string]any{"response": response(model, "completed", []any{done}, rep)})
	return s.err == nil
}

// echoEnd ends the stream with an error event or response.failed that
// echoes cred, when rep asks for it, and reports whether it did.
func (o *OpenAI) echoEnd(ev func(string, map[string]any), rep Reply, model, cred string) bool {
	msg := "upstream failure for key " + cred
	switch rep.Echo {
	case EchoErrorEvent:
		ev("error", map[string]any{"code": "server_error", "message": msg, "param": nil})
	case EchoResponseFailed:
		r := response(model, "failed", []any{}, rep)
		r["error"] = map[string]any{"code": "server_error", "message": msg}
		ev("response.failed", map[string]any{"response": r})
	default:
		return false
	}
	return true
}
