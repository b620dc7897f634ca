package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
)

// Anthropic is a local double of the Anthropic Messages API. Point Claude
// Code at it with ANTHROPIC_BASE_URL=[Anthropic.URL]. Its methods are safe
// for concurrent use; it is closed by t.Cleanup.
type Anthropic struct {
	double
}

// NewAnthropic starts an Anthropic double on 127.0.0.1 answering with opts.
func NewAnthropic(t testing.TB, opts Options) *Anthropic {
	a := &Anthropic{}
	a.opts = opts
	mux := http.NewServeMux()
	mux.HandleFunc("HEAD /api/hello", a.hello)
	mux.HandleFunc("GET /api/hello", a.hello)
	mux.HandleFunc("POST /v1/messages", a.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", a.countTokens)
	mux.HandleFunc("/", a.notFound)
	a.start(t, mux)
	return a
}

func (a *Anthropic) hello(w http.ResponseWriter, r *http.Request) {
	a.record(r)
	w.WriteHeader(http.StatusOK)
}

func (a *Anthropic) notFound(w http.ResponseWriter, r *http.Request) {
	a.record(r)
	http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not found"}}`, http.StatusNotFound)
}

func (a *Anthropic) countTokens(w http.ResponseWriter, r *http.Request) {
	if _, err := a.record(r); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"input_tokens":42}`))
}

// messageRequest is the part of a Messages request the double reads.
type messageRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
}

func (a *Anthropic) messages(w http.ResponseWriter, r *http.Request) {
	rec, err := a.record(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req messageRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	rep := a.reply()
	if rep.DropBeforeAnswer {
		hangUp(w)
		return
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		writeError(w, rep, rec)
		return
	}
	model := a.model(req.Model)
	cred := rec.Credential()
	echoHead(w, rep, cred)
	defer echoTail(w, rep, cred)
	if !req.Stream {
		a.whole(w, rep, model, cred)
		a.complete(rec)
		return
	}
	a.streaming(1)
	defer a.streaming(-1)
	if a.stream(w, rep, model, cred) {
		a.complete(rec)
	}
}

// anthropicUsage is the Messages usage object. Every field is sent, as the
// API does, so a missing cache field cannot hide input.
type anthropicUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

func (rep Reply) anthropicUsage(output int64) *anthropicUsage {
	if rep.NoUsage {
		return nil
	}
	in, _ := rep.usage()
	return &anthropicUsage{InputTokens: in, CacheCreationInputTokens: rep.CacheCreationInputTokens,
		CacheReadInputTokens: rep.CacheReadInputTokens, OutputTokens: output}
}

// ids numbers the double's message and tool-use ids. The real API never
// repeats one, and Claude Code drops a streamed message whose id it has
// seen: with one fixed id a scripted tool use could be ignored and its
// request sent again (the 9-of-10-files BenchmarkJobOverhead failure).
var ids atomic.Int64

// newID returns a fresh id with prefix, e.g. "msg_test000042".
func newID(prefix string) string { return fmt.Sprintf("%s%06d", prefix, ids.Add(1)) }

func message(model string, content []any, stop any, usage *anthropicUsage) map[string]any {
	m := map[string]any{"id": newID("msg_test"), "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil}
	if usage != nil {
		m["usage"] = usage
	}
	return m
}

func (a *Anthropic) whole(w http.ResponseWriter, rep Reply, model, cred string) {
	_, out := rep.usage()
	text := rep.text()
	if rep.Echo == EchoText {
		text += " " + cred
	}
	content := []any{map[string]any{"type": "text", "text": text}}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(message(model, content, "end_turn", rep.anthropicUsage(out)))
}

// stream writes the SSE answer and reports whether every event was written.
// message_start carries a provisional output_tokens of 1; message_delta
// carries the cumulative final usage (notes/gate.md §3).
func (a *Anthropic) stream(w http.ResponseWriter, rep Reply, model, cred string) bool {
	s := newSSE(w, rep)
	_, out := rep.usage()
	s.event("message_start", js(map[string]any{"type": "message_start",
		"message": message(model, []any{}, nil, rep.anthropicUsage(1))}))
	s.event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i, d := range rep.deltas() {
		if i == 1 && (rep.Echo == EchoErrorEvent || rep.Echo == EchoResponseFailed) {
			s.event("error", js(map[string]any{"type": "error",
				"error": map[string]any{"type": "overloaded_error", "message": "Overloaded (request key " + cred + ")"}}))
			return s.err == nil
		}
		if rep.Echo == EchoText && i == 0 {
			d += " " + cred
		}
		s.event("content_block_delta", js(map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": d}}))
	}
	if rep.Truncate {
		return s.err == nil
	}
	s.event("content_block_stop", `{"type":"content_block_stop","index":0}`)
	delta := map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}}
	if u := rep.anthropicUsage(out); u != nil {
		delta["usage"] = u
	}
	s.event("message_delta", js(delta))
	s.event("message_stop", `{"type":"message_stop"}`)
	return s.err == nil
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("providertest: " + err.Error()) // only maps of plain values are encoded
	}
	return string(b)
}
