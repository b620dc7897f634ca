package gate

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/providertest"
)

// TestNothingRealComesBack: doubles that echo the real key in an error
// body of any status, an SSE error event inside a 200 stream (both
// providers), a text delta, a non-streamed body, a response header or a
// trailer — the client never receives the key; each case is one
// security event (issue 18 scope 2).
func TestNothingRealComesBack(t *testing.T) {
	tests := []struct {
		name       string
		provider   Provider
		stream     bool
		reply      providertest.Reply
		wantStatus int
		where      string
	}{
		{"anthropic 401 body", Anthropic, true, providertest.Reply{Status: 401, EchoCredential: true, Body: `{"error":{"message":"invalid x-api-key"}}`}, 401, "upstream HTTP"},
		{"openai 500 body", OpenAI, true, providertest.Reply{Status: 500, EchoCredential: true, Body: `{"error":{"message":"boom"}}`}, 500, "upstream HTTP"},
		{"anthropic 500 body", Anthropic, true, providertest.Reply{Status: 500, EchoCredential: true, Body: `{"error":{"message":"boom"}}`}, 500, "upstream HTTP"},
		{"anthropic event: error in a 200 stream", Anthropic, true, providertest.Reply{Chunks: 4, Echo: providertest.EchoErrorEvent}, 200, "response body"},
		{"openai error event in a 200 stream", OpenAI, true, providertest.Reply{Chunks: 4, Echo: providertest.EchoErrorEvent}, 200, "response body"},
		{"openai response.failed in a 200 stream", OpenAI, true, providertest.Reply{Chunks: 4, Echo: providertest.EchoResponseFailed}, 200, "response body"},
		{"anthropic text delta", Anthropic, true, providertest.Reply{Chunks: 4, Echo: providertest.EchoText}, 200, "response body"},
		{"anthropic whole body", Anthropic, false, providertest.Reply{Echo: providertest.EchoText}, 502, "response body"},
		{"anthropic response header", Anthropic, true, providertest.Reply{Echo: providertest.EchoHeader}, 502, "response header"},
		{"openai response header", OpenAI, true, providertest.Reply{Echo: providertest.EchoHeader}, 502, "response header"},
		{"anthropic trailer", Anthropic, true, providertest.Reply{Chunks: 4, Echo: providertest.EchoTrailer}, 200, "response trailer"},
		{"openai trailer", OpenAI, true, providertest.Reply{Chunks: 4, Echo: providertest.EchoTrailer}, 200, "response trailer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.anth.Script(tt.reply)
			f.oai.Script(tt.reply)
			gr, phantom := f.grant(spec(tt.provider))
			resp := f.call(tt.provider, phantom, gr.Model, tt.stream)
			body := readAll(t, resp)
			hdr, _ := json.Marshal(resp.Header)
			trl, _ := json.Marshal(resp.Trailer)
			got := body + string(hdr) + string(trl)
			if strings.Contains(got, realKey(tt.provider)) || strings.Contains(got, "canary") {
				t.Errorf("the client received the real key: %s", got)
			}
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d (%s)", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantStatus == 200 && !strings.Contains(body, "withheld") {
				t.Errorf("stream did not end with the gate's error event: %s", body)
			}
			if n := countReason(f.events.Events(), ReasonEcho); n != 1 {
				t.Errorf("%d %s security events, want 1", n, ReasonEcho)
			}
			for _, e := range f.events.Events() {
				if e.Reason == ReasonEcho && !strings.HasPrefix(e.Detail, tt.where) {
					t.Errorf("event detail %q, want it to start with %q", e.Detail, tt.where)
				}
			}
			if n := f.gate.Refusals()[ReasonEcho]; n != 1 {
				t.Errorf("refusal count %d, want 1", n)
			}
			if tt.wantStatus != 200 || tt.reply.Status != 0 {
				return
			}
			if g := f.settled(gr.ID); g.Used.Tokens == 0 {
				t.Errorf("withheld stream charged nothing: %+v", g.Used)
			}
		})
	}
}

// TestCleanStreamUntouched: the check releases a clean stream byte for
// byte (the client's bytes equal the double's answer as a direct client
// reads it).
func TestCleanStreamUntouched(t *testing.T) {
	f := newFixture(t, nil)
	reply := providertest.Reply{Chunks: 40, Text: strings.Repeat("clean answer ", 400)}
	f.anth.Script(reply)
	gr, phantom := f.grant(spec(Anthropic))
	viaGate := readAll(t, f.call(Anthropic, phantom, gr.Model, true))
	req, _ := http.NewRequest("POST", f.anth.URL()+"/v1/messages", strings.NewReader(`{"model":"`+gr.Model+`","stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	direct, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// The two answers differ in their message id only: the double numbers
	// them, as the real API gives each message its own.
	msgID := regexp.MustCompile(`"msg_test[0-9]+"`)
	if got, want := msgID.ReplaceAllString(viaGate, `"msg"`), msgID.ReplaceAllString(string(direct), `"msg"`); got != want {
		t.Errorf("stream changed by the gate:\n got %q\nwant %q", got, want)
	}
	if n := countReason(f.events.Events(), ReasonEcho); n != 0 {
		t.Errorf("clean stream recorded %d echo events", n)
	}
}

func countReason(evs []event.Event, reason string) int {
	n := 0
	for _, e := range evs {
		if e.Reason == reason {
			n++
		}
	}
	return n
}

// TestLeakCheck: the real credential literally, JSON-escaped, or any
// credential format is a leak; ordinary answer text is not.
func TestLeakCheck(t *testing.T) {
	key := realKey(Anthropic)
	escaped := strings.ReplaceAll(key, "-", `\u002d`)
	c := leakCheck{key: []byte(key)}
	tests := []struct {
		name, in string
		want     bool
	}{
		{"plain text", `data: {"type":"content_block_delta","delta":{"text":"hello \u00e9 world"}}` + "\n", false},
		{"real key", `data: {"delta":{"text":"` + key + `"}}` + "\n", true},
		{"real key with escaped hyphens", `data: {"delta":{"text":"` + escaped + `"}}` + "\n", true},
		{"another provider's key format", `data: {"delta":{"text":"` + realKey(OpenAI) + `"}}` + "\n", true},
		{"github token format", "event: error\ndata: {\"error\":{\"message\":\"ghp_" + strings.Repeat("q", 36) + "\"}}\n", true},
		{"escaped slash only", `data: {"text":"a\/b"}` + "\n", false},
	}
	for _, tt := range tests {
		if got := c.in([]byte(tt.in)); got != tt.want {
			t.Errorf("%s: leak %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestKeySplitAcrossDeltas: a key the upstream streams in pieces, none
// holding it whole, never reaches the client whole: the concatenation of
// the deltas is checked too.
func TestKeySplitAcrossDeltas(t *testing.T) {
	for _, p := range []Provider{Anthropic, OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			f := newFixture(t, nil)
			rep := providertest.Reply{Text: "the key is " + realKey(p) + " and more text after it", Chunks: 40, ChunkDelay: 3 * time.Millisecond}
			f.anth.Script(rep)
			f.oai.Script(rep)
			gr, phantom := f.grant(spec(p))
			body := readAll(t, f.call(p, phantom, gr.Model, true))
			text := strings.ReplaceAll(clientText([]byte(body)), "\x00", "") // what the client reassembles
			if strings.Contains(body, realKey(p)) || strings.Contains(text, realKey(p)) {
				t.Fatal("the client reassembled the key")
			}
			if len(text) == 0 {
				t.Error("no delta reached the client before the key: the split was not exercised")
			}
			if !strings.Contains(body, "withheld") {
				t.Errorf("stream did not end with the gate's error event: %s", body)
			}
			found := false
			for _, e := range f.events.Events() {
				found = found || (e.Reason == ReasonEcho && strings.HasPrefix(e.Detail, "response deltas"))
			}
			if !found {
				t.Errorf("no %s event for the split key", ReasonEcho)
			}
		})
	}
}

// TestLeakCheckHeaderNames: the transport canonicalises a header or
// trailer name's case, so a key in a name reaches the check as "X-Gk-Q7-…";
// a client lowers it back. Names are checked with their case undone.
func TestLeakCheckHeaderNames(t *testing.T) {
	key := "gk" + strings.Repeat("-q7", 14) + "-canary"
	tests := []struct {
		name, header string
		want         bool
	}{
		{"the key in a name", "X-" + key, true},
		{"a credential format in a name", "X-" + realKey(OpenAI), true},
		{"ordinary names", "Anthropic-Ratelimit-Requests-Reset", false},
	}
	for _, tt := range tests {
		h := http.Header{}
		h.Set(tt.header, "v") // canonicalised, as the transport stores it
		if got := (leakCheck{key: []byte(key)}).header(h); got != tt.want {
			t.Errorf("%s (%v): leak %v, want %v", tt.name, h, got, tt.want)
		}
	}
}
