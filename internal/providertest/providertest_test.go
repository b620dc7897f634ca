package providertest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// events reads an SSE body into (event name, data) pairs.
func events(t *testing.T, body io.Reader) (names []string, data []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("data line %q: %v", d, err)
			}
			data = append(data, m)
		}
	}
	return names, data
}

func post(t *testing.T, url, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestAnthropicStream(t *testing.T) {
	a := NewAnthropic(t, Options{Default: Reply{Text: "hello world", Chunks: 2, InputTokens: 7,
		OutputTokens: 3, CacheReadInputTokens: 100}})
	resp := post(t, a.URL()+"/v1/messages?beta=true", `{"model":"claude-x","stream":true}`,
		map[string]string{"x-api-key": "k1"})
	names, data := events(t, resp.Body)
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	usage := data[5]["usage"].(map[string]any)
	if got := usage["output_tokens"]; got != 3.0 {
		t.Errorf("message_delta output_tokens = %v, want 3", got)
	}
	if got := usage["cache_read_input_tokens"]; got != 100.0 {
		t.Errorf("cache_read_input_tokens = %v, want 100", got)
	}
	reqs := a.Requests()
	if len(reqs) != 1 || reqs[0].Credential() != "k1" || reqs[0].RawQuery != "beta=true" || !reqs[0].Completed {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestAnthropicScriptedError(t *testing.T) {
	a := NewAnthropic(t, Options{Replies: []Reply{{Status: 401, Body: `{"error":"bad key"}`, EchoCredential: true}}})
	resp := post(t, a.URL()+"/v1/messages", `{"model":"m","stream":true}`, map[string]string{"x-api-key": "sekrit"})
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 401 || !strings.Contains(string(b), "sekrit") {
		t.Errorf("got %d %q, want 401 echoing the key", resp.StatusCode, b)
	}
	// Second request falls back to the default reply.
	resp = post(t, a.URL()+"/v1/messages", `{"model":"m","stream":false}`, nil)
	if resp.StatusCode != 200 {
		t.Errorf("default reply status %d", resp.StatusCode)
	}
}

func TestAnthropicNoUsageAndCountTokens(t *testing.T) {
	a := NewAnthropic(t, Options{Default: Reply{NoUsage: true}})
	resp := post(t, a.URL()+"/v1/messages", `{"model":"m","stream":true}`, nil)
	_, data := events(t, resp.Body)
	for _, d := range data {
		if _, ok := d["usage"]; ok {
			t.Errorf("event %v carries usage", d["type"])
		}
		if m, ok := d["message"].(map[string]any); ok && m["usage"] != nil {
			t.Errorf("message_start carries usage")
		}
	}
	resp = post(t, a.URL()+"/v1/messages/count_tokens", `{"model":"m"}`, nil)
	b, _ := io.ReadAll(resp.Body)
	if string(b) != `{"input_tokens":42}` {
		t.Errorf("count_tokens = %q", b)
	}
	hreq, _ := http.NewRequest("HEAD", a.URL()+"/api/hello", nil)
	hresp, err := http.DefaultClient.Do(hreq)
	if err != nil || hresp.StatusCode != 200 {
		t.Errorf("HEAD /api/hello = %v, %v", hresp, err)
	}
}

func TestOpenAIStream(t *testing.T) {
	o := NewOpenAI(t, Options{Default: Reply{Text: "abc", InputTokens: 5, OutputTokens: 2, CacheReadInputTokens: 4}})
	resp := post(t, o.URL()+"/v1/responses", `{"model":"gpt-x","stream":true}`,
		map[string]string{"Authorization": "Bearer k2"})
	names, data := events(t, resp.Body)
	want := []string{"response.created", "response.output_item.added", "response.output_text.delta",
		"response.output_item.done", "response.completed"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	usage := data[4]["response"].(map[string]any)["usage"].(map[string]any)
	if usage["input_tokens"] != 9.0 || usage["output_tokens"] != 2.0 {
		t.Errorf("usage = %v", usage)
	}
	if got := o.Requests()[0].Credential(); got != "k2" {
		t.Errorf("credential = %q", got)
	}
}

func TestOpenAITruncate(t *testing.T) {
	o := NewOpenAI(t, Options{Default: Reply{Truncate: true, Chunks: 3, Text: "abcdef"}})
	resp := post(t, o.URL()+"/v1/responses", `{"model":"m","stream":true}`, nil)
	names, _ := events(t, resp.Body)
	if names[len(names)-1] != "response.output_text.delta" {
		t.Errorf("last event %q, want a delta (no terminal event)", names[len(names)-1])
	}
}
