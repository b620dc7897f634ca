package gate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestStalledBodyIsRefused: a request whose body stops arriving (declared
// longer than sent, or chunked and never finished) is refused
// request.body_timeout with 408 once BodyTimeout passes, instead of holding
// a handler until the client goes away; nothing reaches the provider.
func TestStalledBodyIsRefused(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.BodyTimeout = 300 * time.Millisecond })
	gr, phantom := f.grant(spec(Anthropic))
	body := `{"model":"` + gr.Model + `","max_tokens":10}`
	head := "POST /v1/messages HTTP/1.1\r\nHost: gate\r\nContent-Type: application/json\r\nX-Api-Key: " + phantom + "\r\n"
	stalled := fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body)+100, body)
	tests := []struct {
		name, raw  string
		wantStatus int
		wantReason string
	}{
		{"declared length never reached", head + stalled, 408, ReasonBodyTimeout},
		{"chunked body never finished", head + fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(body), body), 408, ReasonBodyTimeout},
		// Refused before its body is read: net/http discards the unread
		// body before it answers, and that read is bounded too.
		{"refused for its route, body stalled", strings.Replace(head, "/v1/messages", "/v1/other", 1) + stalled, 404, ReasonRoute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.gate.Refusals()[tt.wantReason]
			start := time.Now()
			resp := rawRequest(t, f.srv.Listener.Addr().String(), tt.raw)
			if got := resp.StatusCode; got != tt.wantStatus {
				t.Errorf("status %d, want %d", got, tt.wantStatus)
			}
			if got := resp.Header.Get("X-Coagent8-Gate-Reason"); got != tt.wantReason {
				t.Errorf("reason %q, want %q", got, tt.wantReason)
			}
			if got := f.gate.Refusals()[tt.wantReason] - before; got != 1 {
				t.Errorf("refusals of %s grew by %d, want 1", tt.wantReason, got)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("refused after %v, want about the 300ms body timeout", d)
			}
		})
	}
	if n := len(f.anth.Requests()); n != 0 {
		t.Errorf("double saw %d requests, want 0", n)
	}
}

// TestBodyTimeoutDoesNotCutTheStream: the body deadline ends when the body
// has been read; an answer streamed for longer than BodyTimeout reaches
// the client whole.
func TestBodyTimeoutDoesNotCutTheStream(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.BodyTimeout = 200 * time.Millisecond })
	f.anth.Script(providertest.Reply{Text: "abcde", Chunks: 5, ChunkDelay: 100 * time.Millisecond}) // lasts about 400ms
	gr, phantom := f.grant(spec(Anthropic))
	resp := f.call(Anthropic, phantom, gr.Model, true)
	got := readAll(t, resp)
	if resp.StatusCode != 200 || !strings.Contains(got, "message_stop") {
		t.Fatalf("status %d, stream %q: want a whole 200 stream", resp.StatusCode, got)
	}
}
